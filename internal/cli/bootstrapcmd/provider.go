package bootstrapcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/install/bootstrap"
	"github.com/weir-gitops/weir/internal/install/gitprovider"
	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// provider describes one Git host's bootstrap command.
type provider struct {
	// name is the subcommand ("github"), title the host's name in text.
	name, title string
	// tokenEnv holds the API token (GITHUB_TOKEN).
	tokenEnv string
	// defaultHostname is --hostname's default.
	defaultHostname string
	// visibilityFlag says the host takes --visibility (GitLab) rather
	// than --private.
	visibilityFlag bool
	// groups says the host gives groups access (--group, Bitbucket
	// Server) rather than teams (--team), with groupPermission, and that
	// --username names the Git user over HTTPS.
	groups          bool
	groupPermission string
	newHost         func(ctx context.Context, a gitprovider.Address, token string) (gitprovider.Host, error)
}

// providerFlags are the flags of a provider bootstrap beyond the common ones.
type providerFlags struct {
	owner, repository string
	personal, private bool
	visibility        string
	teams             []string
	readWriteKey      bool
	reconcile         bool
	hostname          string
	// username is the Git user over HTTPS (--username, Bitbucket Server).
	username string
}

func newProviderCommand(streams genericiooptions.IOStreams, deps *clideps.Deps, p provider, long, example string) *cobra.Command {
	o := defaultOptions()
	var fl gitFlags
	var pf providerFlags
	cmd := &cobra.Command{
		Use:     p.name,
		Short:   "Deploy weir on a cluster connected to a " + p.title + " repository",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runProvider(c.Context(), streams, deps, p, &o, &fl, &pf)
		},
	}
	bindProviderFlags(cmd.Flags(), p, &pf)
	bindCommonFlags(cmd.Flags(), &o, &fl)
	cmd.Flags().Lookup("token-auth").Usage = "when enabled, the personal access token is used over HTTPS by the CLI and the cluster instead of an SSH deploy key"
	return cmd
}

func bindProviderFlags(f *pflag.FlagSet, p provider, pf *providerFlags) {
	owner := " user or organization name"
	if p.groups {
		owner = " user or project name"
	}
	f.StringVar(&pf.owner, "owner", "", p.title+owner)
	f.StringVar(&pf.repository, "repository", "", p.title+" repository name")
	if p.groups {
		f.StringSliceVar(&pf.teams, "group", nil, p.title+" groups given write access to the repository (also accepts comma-separated values)")
		f.StringVarP(&pf.username, "username", "u", "git", "authentication username")
		f.BoolVar(&pf.personal, "personal", false, "if true, the owner is assumed to be a "+p.title+" user; otherwise a project")
	} else {
		f.StringSliceVar(&pf.teams, "team", nil, p.title+" team and the access to be given to it (team:maintain); maintainer access when no access level is given (also accepts comma-separated values)")
		f.BoolVar(&pf.personal, "personal", false, "if true, the owner is assumed to be a "+p.title+" user; otherwise an org")
	}
	if p.visibilityFlag {
		f.StringVar(&pf.visibility, "visibility", "private", "visibility of a repository bootstrap creates: public, private or internal")
	} else {
		f.BoolVar(&pf.private, "private", true, "if true, the repository is setup or configured as private")
	}
	f.StringVar(&pf.hostname, "hostname", p.defaultHostname, p.title+" hostname")
	f.BoolVar(&pf.reconcile, "reconcile", false, "if true, the configured options are also reconciled if the repository already exists")
	f.BoolVar(&pf.readWriteKey, "read-write-key", false, "if true, the deploy key is configured with read/write permissions")
}

// runProvider makes sure the repository exists on the host, then runs the
// bootstrap of bootstrap git against it: over HTTPS with the token for
// the CLI, and for the cluster the same (--token-auth) or SSH with a
// deploy key the host is given through its API.
func runProvider(ctx context.Context, streams genericiooptions.IOStreams, deps *clideps.Deps, p provider,
	o *bootstrap.Options, fl *gitFlags, pf *providerFlags) error {
	if pf.owner == "" || pf.repository == "" {
		return errors.New("--owner and --repository are required")
	}
	if pf.hostname == "" {
		return fmt.Errorf("invalid hostname %q", pf.hostname)
	}
	teamFlag := "team"
	if p.groups {
		teamFlag = "group"
	}
	teams, err := gitprovider.ParseTeams(teamFlag, pf.teams)
	if err != nil {
		return err
	}
	for team, perm := range teams {
		if perm == "" && p.groupPermission != "" {
			teams[team] = p.groupPermission
		}
	}
	visibility := pf.visibility
	if !p.visibilityFlag {
		visibility = "public"
		if pf.private {
			visibility = "private"
		}
	}
	token, err := readToken(streams, p)
	if err != nil {
		return err
	}
	secrets := []string{token}
	o.Password = ""
	if err := complete(o, fl, deps); err != nil {
		return err
	}
	o.Password = ""
	prog := output.Progress{W: streams.ErrOut}
	err = bootstrapProvider(ctx, deps, p, prog, o, pf, token, gitprovider.Request{
		Repo:      repoRef(pf),
		Settings:  gitprovider.Settings{Visibility: visibility},
		Teams:     teams,
		Reconcile: pf.reconcile,
	})
	if err != nil {
		return notifier.Scrub(err, secrets)
	}
	prog.Successf("bootstrap finished")
	return nil
}

func bootstrapProvider(ctx context.Context, deps *clideps.Deps, p provider, prog output.Progress,
	o *bootstrap.Options, pf *providerFlags, token string, req gitprovider.Request) error {
	host, err := p.newHost(ctx, gitprovider.Address{Hostname: pf.hostname, CA: o.CA}, token)
	if err != nil {
		return err
	}
	repo, teamsErr := gitprovider.EnsureRepository(ctx, host, prog, req)
	if repo == nil {
		return teamsErr
	}
	user := gitUser(p, pf)
	if o.TokenAuth {
		o.URL, o.Username, o.Password = repo.HTTPURL, user, token
	} else {
		if o.URL, err = gitprovider.SSHURL(repo.SSHURL, o.SSHHostname); err != nil {
			return err
		}
		o.Clone = &bootstrap.Remote{URL: repo.HTTPURL, Username: user, Password: token}
		o.AuthorizeDeployKey = func(ctx context.Context, key string) error {
			title := gitprovider.DeployKeyName(o.Components.Namespace, o.Branch, o.SecretName, syncPath(o.Path))
			changed, err := gitprovider.EnsureDeployKey(ctx, host, repo, gitprovider.DeployKey{Title: title, Key: key, ReadOnly: !pf.readWriteKey})
			if err == nil && changed {
				prog.Successf("configured deploy key %q for %q", title, repo.WebURL)
			}
			return err
		}
	}
	kube, err := deps.Client()
	if err != nil {
		return err
	}
	if _, err := bootstrap.Run(ctx, kube, prog, nil, *o); err != nil {
		return err
	}
	if teamsErr != nil {
		return fmt.Errorf("bootstrap completed with errors: %w", teamsErr)
	}
	return nil
}

// gitUser is the user the CLI and (--token-auth) the cluster give Git
// over HTTPS with the token: "git", which the API hosts ignore, or for
// Bitbucket Server, which checks it, --username, or the owner of a
// personal repository, as flux does.
func gitUser(p provider, pf *providerFlags) string {
	switch {
	case !p.groups:
		return "git"
	case pf.personal:
		return pf.owner
	default:
		return pf.username
	}
}

// repoRef is the repository the flags name; a --repository with slashes
// puts it in subgroups of --owner (GitLab).
func repoRef(pf *providerFlags) gitprovider.RepoRef {
	owner, name := pf.owner, pf.repository
	if i := strings.LastIndex(name, "/"); i >= 0 {
		owner, name = owner+"/"+name[:i], name[i+1:]
	}
	return gitprovider.RepoRef{Owner: owner, Name: name, Personal: pf.personal}
}

// syncPath is the Kustomization's path for --path, "./<path>".
func syncPath(p string) string {
	c := strings.TrimPrefix(path.Clean("/"+p), "/")
	return "./" + c
}

// readToken reads the host's token from its variable or, without one,
// from a line of stdin (a prompt on a terminal, or a pipe).
func readToken(streams genericiooptions.IOStreams, p provider) (string, error) {
	if t := os.Getenv(p.tokenEnv); t != "" {
		return t, nil
	}
	fmt.Fprintf(streams.ErrOut, "Please enter your %s personal access token (PAT): ", p.title)
	line, err := bufio.NewReader(streams.In).ReadString('\n')
	if t := strings.TrimSpace(line); t != "" {
		return t, nil
	}
	if err != nil {
		return "", fmt.Errorf("%s environment variable not found, and no token on stdin", p.tokenEnv)
	}
	return "", errors.New("no personal access token given")
}
