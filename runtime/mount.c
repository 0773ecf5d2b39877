/* mount: placeholder until written. */
