// Package bootstrapcmd implements `weir bootstrap git`: the flux CLI's
// bootstrap for any Git server reachable over HTTPS or SSH, and `bootstrap
// github|gitea|gitlab|bitbucket-server`, which first make the repository
// (and the cluster's deploy key) through the host's API. The work is in
// internal/install/bootstrap and internal/install/gitprovider; this package
// turns flags, files and the environment (GIT_PASSWORD, SSH_AUTH_SOCK,
// GITHUB_TOKEN, GITEA_TOKEN, GITLAB_TOKEN, BITBUCKET_TOKEN) into their options and asks the
// user's confirmations on the terminal.
package bootstrapcmd
