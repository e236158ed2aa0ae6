package bootstrapcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/install/gitprovider"
)

const providerLong = `The bootstrap %[1]s command creates the %[2]s repository if it does not exist
and commits weir's manifests to the branch (<path>/flux-system), installs weir on
the cluster the first time, and configures it to reconcile itself and everything
under <path> from there. The API token is read from %[3]s (or stdin).

The CLI clones and pushes over HTTPS with the token. The cluster fetches over SSH
with a generated deploy key that bootstrap adds to the repository (read-only
unless --read-write-key), or with --token-auth over HTTPS with the token.`

func newGitHubCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	return newProviderCommand(streams, deps, provider{
		name: "github", title: "GitHub", tokenEnv: "GITHUB_TOKEN", defaultHostname: gitprovider.GitHubDomain,
		newHost: func(_ context.Context, a gitprovider.Address, token string) (gitprovider.Host, error) {
			return gitprovider.NewGitHub(a, token)
		},
	}, longFor("github", "GitHub", "GITHUB_TOKEN"), `  # A private repository of an organization, teams given access
  export GITHUB_TOKEN=<token>
  weir bootstrap github --owner=my-org --repository=fleet --path=clusters/my-cluster \
    --team=platform --team=sre:admin

  # A public repository of your own, the cluster fetching with the token
  weir bootstrap github --owner=me --repository=fleet --personal --private=false --token-auth

  # GitHub Enterprise Server
  weir bootstrap github --owner=my-org --repository=fleet --hostname=github.example.com`)
}

func newGiteaCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	return newProviderCommand(streams, deps, provider{
		name: "gitea", title: "Gitea", tokenEnv: "GITEA_TOKEN", defaultHostname: gitprovider.GiteaDomain,
		newHost: func(ctx context.Context, a gitprovider.Address, token string) (gitprovider.Host, error) {
			return gitprovider.NewGitea(ctx, a, token)
		},
	}, longFor("gitea", "Gitea", "GITEA_TOKEN"), `  export GITEA_TOKEN=<token>
  weir bootstrap gitea --owner=my-org --repository=fleet --hostname=gitea.example.com --path=clusters/my-cluster`)
}

func newGitLabCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	return newProviderCommand(streams, deps, provider{
		name: "gitlab", title: "GitLab", tokenEnv: "GITLAB_TOKEN", defaultHostname: gitprovider.GitLabDomain,
		visibilityFlag: true,
		newHost: func(_ context.Context, a gitprovider.Address, token string) (gitprovider.Host, error) {
			return gitprovider.NewGitLab(a, token)
		},
	}, longFor("gitlab", "GitLab", "GITLAB_TOKEN"), `  export GITLAB_TOKEN=<token>
  # A project of a group (subgroups: --repository=sub/fleet), the cluster fetching with the token
  weir bootstrap gitlab --owner=my-group --repository=fleet --token-auth --path=clusters/my-cluster

  # A self-managed GitLab, a public project
  weir bootstrap gitlab --owner=my-group --repository=fleet --hostname=gitlab.example.com --visibility=public`)
}

func longFor(name, title, env string) string {
	return fmt.Sprintf(providerLong, name, title, env)
}

func newBitbucketServerCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	return newProviderCommand(streams, deps, provider{
		name: "bitbucket-server", title: "Bitbucket Server", tokenEnv: "BITBUCKET_TOKEN",
		groups: true, groupPermission: "push",
		newHost: func(_ context.Context, a gitprovider.Address, token string) (gitprovider.Host, error) {
			return gitprovider.NewBitbucketServer(a, token)
		},
	}, longFor("bitbucket-server", "Bitbucket Server", "BITBUCKET_TOKEN")+`

Bitbucket Server and Data Center speak the same REST API 1.0.
--owner is the project's key, or with --personal the user. The API is sent the
token as a bearer token; Git over HTTPS gets --username (the owner with
--personal) and the token. --hostname is required.`, `  export BITBUCKET_TOKEN=<HTTP access token>
  # A private repository of a project, groups given write access, the cluster fetching over SSH
  weir bootstrap bitbucket-server --owner=PRJ --username=me --repository=fleet \
    --hostname=bitbucket.example.com --group=platform --path=clusters/my-cluster

  # A public repository of your own, the cluster fetching with the token
  weir bootstrap bitbucket-server --owner=me --personal --private=false --repository=fleet \
    --hostname=bitbucket.example.com --token-auth`)
}
