/* spawn: placeholder until written. */
