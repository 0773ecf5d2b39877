/* process: placeholder until written. */
