// Package githostserver owns the fakes of the Git hosts' REST APIs that
// the provider bootstraps (weir bootstrap github|gitea|gitlab|
// bitbucket-server) talk to in tests: GitHub's (/api/v3, as GitHub Enterprise Server serves it),
// Gitea's (/api/v1), GitLab's (/api/v4) and Bitbucket Server's
// (/rest/api/1.0 and /rest/keys/1.0, errors as {"errors":[{"message"}]}),
// each on 127.0.0.1 over TLS.
//
// A Server keeps repositories, their deploy keys and team access in
// memory, answers the endpoints bootstrap calls with the fields the real
// APIs answer with, refuses a request without the token (401), and
// records every request (method, path, JSON body) for tests to compare
// with goldens. A repository's clone addresses come from Options.Git, so
// that they point at a real Git server (internal/devenv/testenv/gitserver),
// which is where the Git part of a bootstrap goes.
//
// GitHub's also plays a GitHub App (Options.App): it checks the App's JWT
// (RS256 with the App's public key, iss the App's ID, exp at most ten
// minutes after iat), finds installations by organization or user, mints
// installation tokens (Minted) and says which are still good
// (AcceptsToken), so that a gitserver can let in x-access-token:<token>
// as GitHub's Git endpoint does.
package githostserver
