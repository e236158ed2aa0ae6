package bootstrapcmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/install/bootstrap"
	"github.com/weir-gitops/weir/internal/install/manifests"
	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/source/sshkey"
	"github.com/weir-gitops/weir/internal/version"
)

// NewCommand returns `weir bootstrap` with its git subcommand.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Deploy weir on a cluster the GitOps way",
		Long: `The bootstrap sub-commands push weir's manifests to a Git repository and deploy
weir on the cluster, configured to manage itself from that repository.
Running bootstrap again is safe: it changes nothing when nothing changed.`,
	}
	cmd.AddCommand(newGitCommand(streams, deps), newGitHubCommand(streams, deps), newGiteaCommand(streams, deps),
		newGitLabCommand(streams, deps), newBitbucketServerCommand(streams, deps))
	return cmd
}

// gitFlags are the flags of `bootstrap git` that are not Options fields.
type gitFlags struct {
	silent             bool
	privateKeyFile     string
	caFile             string
	gpgKeyRing         string
	gpgPassphrase      string
	gpgKeyID           string
	sshSigningKeyFile  string
	sshSigningPassword string
}

// defaultOptions are the Options every bootstrap command starts from.
func defaultOptions() bootstrap.Options {
	return bootstrap.Options{
		Branch:     "main",
		Interval:   bootstrap.DefaultInterval,
		SecretName: bootstrap.DefaultSecretName,
		Components: manifests.DefaultOptions(version.Version),
		Author:     git.Signature{Name: "Flux"},
		Username:   "git",
		SSHKey:     sshkey.DefaultOptions(),
	}
}

func newGitCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := defaultOptions()
	var fl gitFlags
	cmd := &cobra.Command{
		Use:   "git",
		Short: "Deploy weir on a cluster connected to a Git repository",
		Long: `The bootstrap git command commits weir's manifests to the branch of a Git
repository (<path>/flux-system), installs weir on the cluster the first time,
and configures it to reconcile itself and everything under <path> from there.

Over SSH, the CLI pushes with --private-key-file, or else with the keys of
the SSH agent (SSH_AUTH_SOCK); a deploy key is then generated for the cluster
and printed, for you to give read access to. The server's host key is
collected on first contact, printed, and stored as known_hosts.
Over HTTPS, --token-auth uses --username and --password (or GIT_PASSWORD) both
for the push and in the cluster.

Patches you add to <path>/flux-system/kustomization.yaml are kept by every
later bootstrap and applied by the cluster.`,
		Example: `  # Bootstrap over SSH with a key that can push (also used by the cluster)
  weir bootstrap git --url=ssh://git@example.com/org/fleet.git --branch=main \
    --path=clusters/my-cluster --private-key-file=./id_ecdsa

  # Bootstrap over HTTPS with a token
  GIT_PASSWORD=<token> weir bootstrap git --url=https://example.com/org/fleet.git \
    --token-auth --path=clusters/my-cluster`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := complete(&o, &fl, deps); err != nil {
				return err
			}
			p := output.Progress{W: streams.ErrOut}
			var confirm bootstrap.Confirm
			if !fl.silent {
				confirm = func(_ context.Context, question string) (bool, error) {
					return output.Confirm(streams.In, streams.ErrOut, question), nil
				}
			}
			kube, err := deps.Client()
			if err != nil {
				return err
			}
			if _, err := bootstrap.Run(c.Context(), kube, p, confirm, o); err != nil {
				return err
			}
			p.Successf("bootstrap finished")
			return nil
		},
	}
	bindGitFlags(cmd.Flags(), &o, &fl)
	return cmd
}

// bindGitFlags binds the flags of bootstrap git to o and fl.
func bindGitFlags(f *pflag.FlagSet, o *bootstrap.Options, fl *gitFlags) {
	f.StringVar(&o.URL, "url", "", "Git repository URL")
	f.StringVarP(&o.Username, "username", "u", o.Username, "basic authentication username")
	f.StringVarP(&o.Password, "password", "p", "", "basic authentication password, or the passphrase of --private-key-file (env GIT_PASSWORD)")
	f.BoolVar(&o.AllowInsecureHTTP, "allow-insecure-http", false, "allows insecure HTTP connections")
	bindCommonFlags(f, o, fl)
}

// bindCommonFlags binds the flags every bootstrap command has.
func bindCommonFlags(f *pflag.FlagSet, o *bootstrap.Options, fl *gitFlags) {
	f.StringVar(&o.Branch, "branch", o.Branch, "Git branch")
	f.StringVar(&o.Path, "path", "", "path relative to the repository root, when specified the cluster sync will be scoped to this path")
	f.DurationVar(&o.Interval, "interval", o.Interval, "sync interval")
	f.StringVar(&o.SecretName, "secret-name", o.SecretName, "name of the secret the sync credentials can be found in or stored to")
	f.BoolVar(&o.RecurseSubmodules, "recurse-submodules", false, "when enabled, configures the GitRepository source to initialize and include Git submodules in the artifact it produces")
	f.StringSliceVar(&o.SparseCheckout, "sparse-checkout", nil, "the directories of the repository the cluster checks out, e.g. --sparse-checkout=clusters/prod,infrastructure")
	f.StringVar(&o.Author.Name, "author-name", o.Author.Name, "author name for Git commits")
	f.StringVar(&o.Author.Email, "author-email", "", "author email for Git commits")
	f.StringVar(&o.CommitMessageAppendix, "commit-message-appendix", "", "string to add to the commit messages, e.g. '[ci skip]'")
	f.BoolVarP(&fl.silent, "silent", "s", false, "assumes the deploy key is already setup, skips confirmation")
	f.BoolVar(&o.TokenAuth, "token-auth", false, "when enabled, the password is used as a token over HTTPS instead of an SSH key")
	f.StringVar(&fl.privateKeyFile, "private-key-file", "", "path to a private key file used for authenticating to the Git SSH server")
	f.StringSliceVar(&o.SSHHostKeyAlgos, "ssh-hostkey-algos", nil, "list of host key algorithms to be used by the CLI for SSH connections")
	f.StringVar(&o.SSHHostname, "ssh-hostname", "", "SSH hostname, to be used when the SSH host differs from the HTTPS one")
	f.StringVar(&fl.caFile, "ca-file", "", "path to TLS CA file used for validating self-signed certificates")
	f.StringVar(&fl.gpgKeyRing, "gpg-key-ring", "", "path to secret gpg key ring for signing commits")
	f.StringVar(&fl.gpgPassphrase, "gpg-passphrase", "", "passphrase for decrypting GPG private key")
	f.StringVar(&fl.gpgKeyID, "gpg-key-id", "", "key id for selecting a particular key")
	f.StringVar(&fl.sshSigningKeyFile, "ssh-signing-key-file", "", "path to an SSH private key file used for signing commits")
	f.StringVar(&fl.sshSigningPassword, "ssh-signing-password", "", "passphrase of --ssh-signing-key-file")
	o.SSHKey.BindFlags(f)
	o.Components.BindFlags(f)
}

// complete fills the Options from the environment and the files the flags
// name.
func complete(o *bootstrap.Options, fl *gitFlags, deps *clideps.Deps) error {
	o.Components.Namespace = deps.Namespace()
	o.Timeout = deps.Timeout
	o.Poll = deps.Poll()
	if o.Password == "" {
		o.Password = os.Getenv("GIT_PASSWORD")
	}
	o.SSHAgentSocket = os.Getenv("SSH_AUTH_SOCK")
	var err error
	if fl.privateKeyFile != "" {
		if o.PrivateKey, err = readFile("private-key-file", fl.privateKeyFile); err != nil {
			return err
		}
	}
	if fl.caFile != "" {
		if o.CA, err = readFile("ca-file", fl.caFile); err != nil {
			return err
		}
	}
	switch {
	case fl.gpgKeyRing != "" && fl.sshSigningKeyFile != "":
		return fmt.Errorf("--gpg-key-ring and --ssh-signing-key-file cannot be used together")
	case fl.gpgKeyRing != "":
		ring, err := readFile("gpg-key-ring", fl.gpgKeyRing)
		if err != nil {
			return err
		}
		if o.Signer, err = git.NewPGPSigner(ring, fl.gpgPassphrase, fl.gpgKeyID); err != nil {
			return fmt.Errorf("--gpg-key-ring: %w", err)
		}
	case fl.sshSigningKeyFile != "":
		key, err := readFile("ssh-signing-key-file", fl.sshSigningKeyFile)
		if err != nil {
			return err
		}
		if o.Signer, err = git.NewSSHSigner(key, []byte(fl.sshSigningPassword)); err != nil {
			return fmt.Errorf("--ssh-signing-key-file: %w", err)
		}
	}
	if o.Author.When.IsZero() && deps.Now != nil {
		o.Author.When = deps.Now()
	}
	return nil
}

func readFile(flag, name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return data, nil
}
