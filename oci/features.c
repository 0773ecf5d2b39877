/* features: placeholder until written. */
