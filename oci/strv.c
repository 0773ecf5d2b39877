/* strv: placeholder until written. */
