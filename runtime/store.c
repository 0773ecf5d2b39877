/* store: placeholder until written. */
