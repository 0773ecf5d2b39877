/* profile: placeholder until written. */
