/* pidinfo: placeholder until written. */
