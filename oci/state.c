/* state: placeholder until written. */
