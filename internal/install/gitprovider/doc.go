// Package gitprovider owns what `weir bootstrap github|gitea|gitlab|
// bitbucket-server` asks of a Git host's API before any Git is spoken:
// find the repository or create it (in an organization, or with Personal
// in the token user's account), optionally reconcile its settings, grant
// teams access, and give the cluster's SSH public key access as a deploy
// key.
//
// The steps are written once (EnsureRepository, EnsureDeployKey) over
// Host, a small interface each host implements with its own Go client:
// GitHub (go-github, github.com or Enterprise Server at /api/v3), Gitea
// (code.gitea.io/sdk, /api/v1), GitLab (client-go, /api/v4) and
// Bitbucket Server (REST API 1.0 over net/http: it has no maintained Go
// client). As in flux, a repository that exists is used as it is unless
// Reconcile is set, a team that already has access keeps it unless
// Reconcile is set, and a deploy key whose title exists with another key or access is
// deleted and added again (hosts do not edit deploy keys).
package gitprovider
