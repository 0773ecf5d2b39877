/* spec: placeholder until written. */
