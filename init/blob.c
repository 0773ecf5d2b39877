/* blob: the bytes of the init program (init/hako-init, built first) as
 * hako_init_bin .. hako_init_end, for runtime/build/init.c. */
__asm__(".section .rodata\n"
        ".global hako_init_bin\n"
        ".global hako_init_end\n"
        ".balign 16\n"
        "hako_init_bin:\n"
        ".incbin \"" HAKO_INIT_PATH "\"\n"
        "hako_init_end:\n"
        ".previous\n");
