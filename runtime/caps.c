/* caps: placeholder until written. */
