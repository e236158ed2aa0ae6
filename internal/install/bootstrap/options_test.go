package bootstrap

import (
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/install/manifests"

	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/internal/source/git"
)

func TestValidate(t *testing.T) {
	const sshURL = "ssh://git@example.com/org/repo.git"
	const httpsURL = "https://example.com/org/repo.git"
	tests := []struct {
		name string
		opts Options
		// err is a substring of the wanted error, "" for none.
		err string
		// secret must not appear in the error.
		secret string
	}{
		{
			name: "missing URL",
			opts: Options{Branch: "main"},
			err:  "--url is required",
		},
		{
			name: "URL without a host",
			opts: Options{URL: "org/repo", Branch: "main"},
			err:  `--url "org/repo" is not a repository URL`,
		},
		{
			name:   "URL with a password",
			opts:   Options{URL: "https://user:s3cr3t-pw@example.com/org/repo.git", Branch: "main", TokenAuth: true, Password: "x"},
			err:    "--url must not carry a password",
			secret: "s3cr3t-pw",
		},
		{
			name:   "URL with a password and no host",
			opts:   Options{URL: "https://user:s3cr3t-pw@/org/repo.git", Branch: "main"},
			err:    "is not a repository URL",
			secret: "s3cr3t-pw",
		},
		{
			name:   "unparsable URL with a password",
			opts:   Options{URL: "https://user:s3cr3t-pw@example.com:port/org/repo.git", Branch: "main"},
			err:    "<unparsable URL>",
			secret: "s3cr3t-pw",
		},
		{
			name: "clone over https, sync over ssh",
			opts: Options{URL: sshURL, Branch: "main", Clone: &Remote{URL: httpsURL, Username: "git", Password: "t0k"}},
		},
		{
			name:   "clone over ssh",
			opts:   Options{URL: sshURL, Branch: "main", Clone: &Remote{URL: "ssh://git:s3cr3t-pw@example.com/org/repo.git"}},
			err:    `clone URL "ssh://git:xxxxx@example.com/org/repo.git" is not an https repository URL`,
			secret: "s3cr3t-pw",
		},
		{
			name: "clone over http without --allow-insecure-http",
			opts: Options{URL: sshURL, Branch: "main", Clone: &Remote{URL: "http://example.com/org/repo.git"}},
			err:  "is not an https repository URL",
		},
		{
			name: "URL with a user only",
			opts: Options{URL: "ssh://git@example.com/org/repo.git", Branch: "main"},
		},
		{
			name: "ssh with token auth",
			opts: Options{URL: sshURL, Branch: "main", TokenAuth: true, Password: "x"},
			err:  "--token-auth needs an http(s) URL, not ssh",
		},
		{
			name: "http without --allow-insecure-http",
			opts: Options{URL: "http://example.com/org/repo.git", Branch: "main", TokenAuth: true, Password: "x"},
			err:  "scheme http is insecure, pass --allow-insecure-http=true to allow it",
		},
		{
			name: "http with --allow-insecure-http",
			opts: Options{URL: "http://example.com/org/repo.git", Branch: "main", TokenAuth: true, Password: "x", AllowInsecureHTTP: true},
		},
		{
			name: "http with --allow-insecure-http but no token auth",
			opts: Options{URL: "http://example.com/org/repo.git", Branch: "main", AllowInsecureHTTP: true},
			err:  "--token-auth=true must be specified for using an HTTPS AUTH URL",
		},
		{
			name: "https without token auth",
			opts: Options{URL: httpsURL, Branch: "main"},
			err:  "--token-auth=true must be specified for using an HTTPS AUTH URL",
		},
		{
			name: "https upper-case scheme",
			opts: Options{URL: "HTTPS://example.com/org/repo.git", Branch: "main", TokenAuth: true, Password: "x"},
		},
		{
			name: "token auth without password",
			opts: Options{URL: httpsURL, Branch: "main", TokenAuth: true, Username: "git"},
			err:  "--password (or GIT_PASSWORD) is required with --token-auth",
		},
		{
			name: "file scheme with a host",
			opts: Options{URL: "file://example.com/srv/repo.git", Branch: "main"},
			err:  "git URL scheme 'file' not supported, can be: ssh, http and https",
		},
		{
			// file:///path has no host, which is refused first.
			name: "file scheme without a host",
			opts: Options{URL: "file:///srv/repo.git", Branch: "main"},
			err:  "is not a repository URL",
		},
		{
			name: "git scheme",
			opts: Options{URL: "git://example.com/org/repo.git", Branch: "main"},
			err:  "git URL scheme 'git' not supported, can be: ssh, http and https",
		},
		{
			name: "missing branch",
			opts: Options{URL: sshURL},
			err:  "--branch is required",
		},
		{
			name: "path outside the sparse checkout",
			opts: Options{URL: sshURL, Branch: "main", Path: "clusters/dev", SparseCheckout: []string{"apps", "clusters/prod"}},
			err:  `--path "clusters/dev" is outside the directories of --sparse-checkout`,
		},
		{
			name: "path inside the sparse checkout",
			opts: Options{URL: sshURL, Branch: "main", Path: "clusters/dev", SparseCheckout: []string{"./clusters/"}},
		},
		{
			name:   "registry credentials without a pull secret name",
			opts:   Options{URL: sshURL, Branch: "main", Components: manifests.Options{RegistryCredential: "bot:t0ken"}},
			err:    "--registry-creds requires --image-pull-secret to be set",
			secret: "t0ken",
		},
		{
			name: "path leaving the repository",
			opts: Options{URL: sshURL, Branch: "main", Path: "../other"},
			err:  `--path "../other" leaves the repository`,
		},
		{
			name: "https with token auth",
			opts: Options{URL: httpsURL, Branch: "main", TokenAuth: true, Username: "git", Password: "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			err := o.validate()
			wantErr(t, err, tt.err)
			if err != nil && tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q reveals the password", err)
			}
		})
	}
}

func TestValidateDefaults(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want Options
	}{
		{
			name: "defaults filled",
			opts: Options{URL: "ssh://git@example.com/repo", Branch: "main", Path: "./clusters/dev/"},
			want: Options{
				URL: "ssh://git@example.com/repo", Branch: "main", Path: "clusters/dev",
				Interval: time.Minute, SecretName: "flux-system", Author: git.Signature{Name: "Flux"},
				Timeout: 5 * time.Minute, Poll: 2 * time.Second,
			},
		},
		{
			name: "given values kept",
			opts: Options{
				URL: "ssh://git@example.com/repo", Branch: "main", Path: ".",
				Interval: 3 * time.Minute, SecretName: "git-auth", Author: git.Signature{Name: "Bot", Email: "bot@example.com"},
				Timeout: time.Minute, Poll: time.Second,
			},
			want: Options{
				URL: "ssh://git@example.com/repo", Branch: "main", Path: "",
				Interval: 3 * time.Minute, SecretName: "git-auth", Author: git.Signature{Name: "Bot", Email: "bot@example.com"},
				Timeout: time.Minute, Poll: time.Second,
			},
		},
		{
			name: "negative durations replaced",
			opts: Options{URL: "ssh://git@example.com/repo", Branch: "main", Interval: -time.Second, Timeout: -1, Poll: -1},
			want: Options{
				URL: "ssh://git@example.com/repo", Branch: "main",
				Interval: DefaultInterval, SecretName: DefaultSecretName, Author: git.Signature{Name: "Flux"},
				Timeout: 5 * time.Minute, Poll: 2 * time.Second,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			if err := o.validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o); diff != "" {
				t.Errorf("options after validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  string
	}{
		{in: "", want: ""},
		{in: ".", want: ""},
		{in: "./", want: ""},
		{in: "clusters/dev", want: "clusters/dev"},
		{in: "./clusters/dev/", want: "clusters/dev"},
		{in: "clusters//dev", want: "clusters/dev"},
		{in: "a/../b", want: "b"},
		{in: "a/..", want: ""},
		{in: "..", err: "leaves the repository"},
		{in: "../x", err: `--path "../x" leaves the repository`},
		{in: "a/../../x", err: `--path "a/../../x" leaves the repository`},
		{in: "/abs", err: `--path "/abs" must be relative to the repository root`},
		{in: `a\b`, err: `must be relative to the repository root`},
		{in: "..foo", want: "..foo"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := cleanPath(tt.in)
			wantErr(t, err, tt.err)
			if got != tt.want {
				t.Errorf("cleanPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	tests := []struct {
		path          string
		wantSync      string
		wantSystemDir string
	}{
		{path: "", wantSync: "./", wantSystemDir: "flux-system"},
		{path: "clusters/dev", wantSync: "./clusters/dev", wantSystemDir: "clusters/dev/flux-system"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			o := &Options{Path: tt.path}
			if got := o.syncPath(); got != tt.wantSync {
				t.Errorf("syncPath() = %q, want %q", got, tt.wantSync)
			}
			if got := o.systemDir(); got != tt.wantSystemDir {
				t.Errorf("systemDir() = %q, want %q", got, tt.wantSystemDir)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "https://user:pw@example.com/repo", want: "https://user:xxxxx@example.com/repo"},
		{in: "ssh://git@example.com/repo", want: "ssh://git@example.com/repo"},
		{in: "https://example.com:port/", want: "<unparsable URL>"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := redacted(tt.in); got != tt.want {
				t.Errorf("redacted(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
