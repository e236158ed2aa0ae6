package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/install/manifests"
	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/source/sshkey"
)

// Names of what bootstrap writes and creates.
const (
	// SystemDir is the directory under Options.Path that holds weir's own
	// manifests.
	SystemDir = "flux-system"
	// ComponentsFile holds the controllers, CRDs and RBAC.
	ComponentsFile = "gotk-components.yaml"
	// SyncFile holds the GitRepository and Kustomization that point the
	// cluster at the repository.
	SyncFile = "gotk-sync.yaml"
	// KustomizationFile lists the two; users add their patches to it.
	KustomizationFile = "kustomization.yaml"
	// SyncName names the GitRepository and the Kustomization.
	SyncName = "flux-system"
	// DefaultSecretName is --secret-name's default.
	DefaultSecretName = "flux-system"
	// DefaultInterval is the GitRepository's interval (--interval).
	DefaultInterval = time.Minute
	// KustomizationInterval is the interval of the flux-system
	// Kustomization, as Flux writes it.
	KustomizationInterval = 10 * time.Minute
)

// Options are the inputs of one bootstrap.
type Options struct {
	// URL of the repository, as the cluster and the CLI both reach it:
	// ssh://, https:// or (with AllowInsecureHTTP) http://.
	URL string
	// Branch to commit to and to sync from.
	Branch string
	// Path of the cluster's directory in the repository ("" is the root);
	// weir's files go to <Path>/flux-system and the Kustomization syncs
	// ./<Path>.
	Path string
	// Interval of the GitRepository.
	Interval time.Duration
	// SecretName names the source Secret in Components.Namespace.
	SecretName string
	// RecurseSubmodules and SparseCheckout are written to the
	// GitRepository's spec.
	RecurseSubmodules bool
	SparseCheckout    []string
	// Components are the install options (namespace, components, registry…).
	Components manifests.Options

	// Author of the commits.
	Author git.Signature
	// CommitMessageAppendix is added to every commit message after a blank
	// line.
	CommitMessageAppendix string
	// Signer signs the commits when set (OpenPGP or SSH).
	Signer git.Signer

	// TokenAuth makes HTTP(S) use Username and Password, which are also
	// stored in the source Secret.
	TokenAuth          bool
	Username, Password string
	// CA is a PEM bundle for HTTPS, stored as ca.crt.
	CA []byte
	// AllowInsecureHTTP permits an http:// URL.
	AllowInsecureHTTP bool

	// PrivateKey is the SSH identity the CLI pushes with and the cluster
	// fetches with (Password is its passphrase). Without it, SSH pushes go
	// through the agent at SSHAgentSocket and a deploy key is generated
	// for the cluster.
	PrivateKey     []byte
	SSHAgentSocket string
	// SSHKey shapes a generated deploy key.
	SSHKey sshkey.Options
	// SSHHostname (host[:port]) replaces URL's host in the GitRepository
	// and is the host whose keys the source Secret's known_hosts holds,
	// for a cluster that reaches the SSH server under another name than
	// the CLI (flux's --ssh-hostname); the CLI still pushes to URL. Only
	// for an ssh:// URL.
	SSHHostname string
	// SSHHostKeyAlgos, when set, are the host key algorithms the CLI
	// offers when it scans the server's keys and when it pushes (flux's
	// --ssh-hostkey-algos), e.g. rsa-sha2-512 for a server whose
	// known_hosts entry must be its RSA key.
	SSHHostKeyAlgos []string

	// Clone, when set, is where and how the CLI clones and pushes when
	// that differs from URL, which the cluster syncs from: a Git host's
	// API gives the CLI HTTPS with the API token, and the cluster SSH with
	// a deploy key.
	Clone *Remote
	// AuthorizeDeployKey, when set, gives the cluster's SSH public key
	// (authorized_keys format) access to the repository through the Git
	// host's API, instead of asking the user to.
	AuthorizeDeployKey func(ctx context.Context, authorizedKey string) error

	// Timeout bounds the whole bootstrap; Poll is how often waits re-read.
	Timeout time.Duration
	Poll    time.Duration
}

// Remote is a repository address with basic-auth credentials.
type Remote struct {
	URL                string
	Username, Password string
}

// Logger prints bootstrap's progress; internal/cli/output.Progress is one.
type Logger interface {
	Generatef(format string, args ...any)
	Actionf(format string, args ...any)
	Waitingf(format string, args ...any)
	Successf(format string, args ...any)
	Warningf(format string, args ...any)
}

// Confirm asks the user a yes/no question; nil means yes without asking
// (--silent).
type Confirm func(ctx context.Context, question string) (bool, error)

// scheme of the repository URL.
func (o *Options) scheme() string {
	u, err := url.Parse(o.URL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme)
}

// validateHostKeyAlgos refuses a --ssh-hostkey-algos name the SSH client
// does not know, before any connection is made.
func (o *Options) validateHostKeyAlgos() error {
	supported := ssh.SupportedAlgorithms().HostKeys
	for _, a := range o.SSHHostKeyAlgos {
		if !slices.Contains(supported, a) {
			return fmt.Errorf("--ssh-hostkey-algos: unsupported host key algorithm %q, must be one of: %s", a, strings.Join(supported, ", "))
		}
	}
	return nil
}

// syncURL is the GitRepository's spec.url: URL, its host replaced by
// SSHHostname over SSH.
func (o *Options) syncURL() string {
	if o.SSHHostname == "" || o.scheme() != "ssh" {
		return o.URL
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return o.URL
	}
	u.Host = o.SSHHostname
	return u.String()
}

// syncPath is the Kustomization's spec.path: "./<Path>".
func (o *Options) syncPath() string {
	if o.Path == "" {
		return "./"
	}
	return "./" + o.Path
}

// systemDir is <Path>/flux-system.
func (o *Options) systemDir() string { return path.Join(o.Path, SystemDir) }

// validate checks the options and fills defaults.
func (o *Options) validate() error {
	if err := o.validateHostKeyAlgos(); err != nil {
		return err
	}
	if err := o.validateURL(); err != nil {
		return err
	}
	if o.Branch == "" {
		return errors.New("--branch is required")
	}
	if _, err := o.Components.PullSecret(); err != nil {
		return err
	}
	clean, err := cleanPath(o.Path)
	if err != nil {
		return err
	}
	o.Path = clean
	if len(o.SparseCheckout) > 0 && !inSparseCheckout(o.Path, o.SparseCheckout) {
		return fmt.Errorf("--path %q is outside the directories of --sparse-checkout %v: the cluster would not check it out", o.Path, o.SparseCheckout)
	}
	o.fillDefaults()
	return nil
}

// validateURL checks --url and that the credentials flags suit its scheme.
func (o *Options) validateURL() error {
	if o.URL == "" {
		return errors.New("--url is required")
	}
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--url %q is not a repository URL", redacted(o.URL))
	}
	if u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			return errors.New("--url must not carry a password: use --password or GIT_PASSWORD")
		}
	}
	switch o.scheme() {
	case "ssh":
		if o.TokenAuth {
			return errors.New("--token-auth needs an http(s) URL, not ssh")
		}
	case "https":
	case "http":
		if !o.AllowInsecureHTTP {
			return fmt.Errorf("scheme http is insecure, pass --allow-insecure-http=true to allow it")
		}
	default:
		return fmt.Errorf("git URL scheme '%s' not supported, can be: ssh, http and https", u.Scheme)
	}
	if o.scheme() != "ssh" && !o.TokenAuth {
		return fmt.Errorf("--token-auth=true must be specified for using an HTTPS AUTH URL")
	}
	if o.TokenAuth && o.Password == "" {
		return errors.New("--password (or GIT_PASSWORD) is required with --token-auth")
	}
	return o.validateClone()
}

// validateClone checks the CLI's own address, when it has one.
func (o *Options) validateClone() error {
	if o.Clone == nil {
		return nil
	}
	u, err := url.Parse(o.Clone.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && (u.Scheme != "http" || !o.AllowInsecureHTTP)) {
		return fmt.Errorf("clone URL %q is not an https repository URL", redacted(o.Clone.URL))
	}
	return nil
}

// cloneURL is the address the CLI clones and pushes.
func (o *Options) cloneURL() string {
	if o.Clone != nil {
		return o.Clone.URL
	}
	return o.URL
}

// fillDefaults sets what was left empty to its default.
func (o *Options) fillDefaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.SecretName == "" {
		o.SecretName = DefaultSecretName
	}
	if o.Author.Name == "" {
		o.Author.Name = "Flux"
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
}

// cleanPath normalises --path: slash-separated, relative, inside the
// repository; "" and "." are the root.
func cleanPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if strings.Contains(p, `\`) || path.IsAbs(p) {
		return "", fmt.Errorf("--path %q must be relative to the repository root", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("--path %q leaves the repository", p)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// redacted removes a password from a URL for messages.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Redacted()
}

// inSparseCheckout reports whether dir is one of the sparse directories or
// under one of them.
func inSparseCheckout(dir string, sparse []string) bool {
	for _, d := range sparse {
		d = path.Clean(strings.TrimPrefix(d, "./"))
		if d == "." || dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}
