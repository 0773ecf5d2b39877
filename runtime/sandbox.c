/* sandbox: placeholder until written. */
