// Package githostserver owns the fakes of the Git hosts' REST APIs that
// the provider bootstraps (weir bootstrap github|gitea|gitlab) talk to in
// tests: GitHub's (/api/v3, as GitHub Enterprise Server serves it),
// Gitea's (/api/v1) and GitLab's (/api/v4), each on 127.0.0.1 over TLS.
//
// A Server keeps repositories, their deploy keys and team access in
// memory, answers the endpoints bootstrap calls with the fields the real
// APIs answer with, refuses a request without the token (401), and
// records every request (method, path, JSON body) for tests to compare
// with goldens. A repository's clone addresses come from Options.Git, so
// that they point at a real Git server (internal/devenv/testenv/gitserver),
// which is where the Git part of a bootstrap goes.
package githostserver
