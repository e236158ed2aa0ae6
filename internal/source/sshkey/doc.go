// Package sshkey generates the SSH key pairs weir hands to Git hosts as
// deploy keys (`weir create secret git`, `weir bootstrap git`), with the flux
// CLI's flags and defaults: ECDSA on P-384 unless told otherwise, RSA of at
// least 1024 bits in multiples of 8, or Ed25519.
package sshkey
