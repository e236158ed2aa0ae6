// Package bootstrapcmd implements `weir bootstrap git`: the flux CLI's
// bootstrap for any Git server reachable over HTTPS or SSH. The work is in
// internal/install/bootstrap; this package turns flags, files and the environment
// (GIT_PASSWORD, SSH_AUTH_SOCK) into its Options and asks the user's
// confirmations on the terminal.
package bootstrapcmd
