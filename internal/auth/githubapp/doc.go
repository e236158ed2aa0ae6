// Package githubapp authenticates to GitHub as a GitHub App installation,
// the way Flux does when a Secret holds App credentials instead of a
// token: githubAppID, githubAppInstallationID or
// githubAppInstallationOwner, githubAppPrivateKey and, for GitHub
// Enterprise Server, githubAppBaseURL. Two kinds of callers use it: the
// notification Providers (github, githubdispatch,
// githubpullrequestcomment), which call GitHub's REST API with the token,
// and GitRepositories with provider github (and the ImageUpdateAutomations
// that push through them), which clone and push over HTTPS with the basic
// auth GitUsername:<token>.
//
// An App signs a short-lived RS256 JWT with its private key and trades it
// at POST {base}/app/installations/{id}/access_tokens for an installation
// token, which lasts an hour. Notifiers and Git remotes are built per
// delivery or reconcile, so the tokens live in a Cache that outlives them
// (Default, one per process, as Flux keeps one token cache per
// controller): a token is asked for once and reused until shortly before
// it expires.
//
// The private key, the JWT and the tokens are credentials: errors of this
// package never show them, even when GitHub quotes the refused request.
package githubapp
