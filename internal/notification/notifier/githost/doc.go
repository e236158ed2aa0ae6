// Package githost builds the REST clients of the Git hosts Flux's
// Provider types speak to, from a Provider resolved against its Secrets:
// the repository taken from the address as Flux splits it (HTTPS, SSH or
// scp-like), and GitHub (github.com or Enterprise Server, by token or as
// a GitHub App installation), GitLab and Gitea clients posting through
// the event server's HTTP client. The commit-status and the comment
// families share it, so that a repository address means one thing to
// every type.
package githost
