package gitprovider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/githostserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
	"github.com/weir-gitops/weir/internal/install/gitprovider"
)

const (
	token = "s3cr3t-t0ken"
	key1  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFirstKeyFirstKeyFirstKeyFirstKeyFirstKey0"
	key2  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAISecondKeySecondKeySecondKeySecondKey00"
	title = "flux-system-main-flux-system-./clusters/dev"
)

// hostKinds are the hosts whose fakes the tests run against.
var hostKinds = []githostserver.Kind{githostserver.GitHub, githostserver.Gitea, githostserver.GitLab, githostserver.BitbucketServer}

type logger struct{ lines []string }

func (l *logger) Actionf(f string, a ...any)  { l.lines = append(l.lines, "► "+fmt.Sprintf(f, a...)) }
func (l *logger) Successf(f string, a ...any) { l.lines = append(l.lines, "✔ "+fmt.Sprintf(f, a...)) }
func (l *logger) Warningf(f string, a ...any) { l.lines = append(l.lines, "⚠ "+fmt.Sprintf(f, a...)) }

func newHost(t *testing.T, srv *githostserver.Server, kind githostserver.Kind, tok string) gitprovider.Host {
	t.Helper()
	a := gitprovider.Address{Hostname: srv.Hostname, CA: srv.CAPEM()}
	var h gitprovider.Host
	var err error
	switch kind {
	case githostserver.GitHub:
		h, err = gitprovider.NewGitHub(a, tok)
	case githostserver.Gitea:
		h, err = gitprovider.NewGitea(context.Background(), a, tok)
	case githostserver.GitLab:
		h, err = gitprovider.NewGitLab(a, tok)
	case githostserver.BitbucketServer:
		h, err = gitprovider.NewBitbucketServer(a, tok)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestProviders runs the same scenarios against each host's fake and
// compares the requests sent, bodies field by field, with goldens.
func TestProviders(t *testing.T) {
	type scenario struct {
		name string
		// existing is the repository before the run, nil for none.
		existing *githostserver.Repo
		req      gitprovider.Request
		key      gitprovider.DeployKey
		// wantKeys is the repository's deploy keys afterwards.
		wantKeys     []githostserver.Key
		wantChanged  bool
		wantTeamsErr bool
		wantTeams    map[githostserver.Kind]map[string]string
		wantVis      string
	}
	org := gitprovider.RepoRef{Owner: "org", Name: "fleet"}
	personal := gitprovider.RepoRef{Owner: "me", Name: "fleet", Personal: true}
	scenarios := []scenario{{
		name:        "create-org-private",
		req:         gitprovider.Request{Repo: org, Settings: gitprovider.Settings{Visibility: "private"}, Teams: map[string]string{"devs": "", "ops": "admin"}},
		key:         gitprovider.DeployKey{Title: title, Key: key1, ReadOnly: true},
		wantKeys:    []githostserver.Key{{Title: title, Key: key1, ReadOnly: true}},
		wantChanged: true,
		wantVis:     "private",
		wantTeams: map[githostserver.Kind]map[string]string{
			githostserver.GitHub: {"devs": "maintain", "ops": "admin"},
			githostserver.Gitea:  {"devs": "write", "ops": "write"},
			githostserver.GitLab: {"devs": "maintainer", "ops": "owner"},
			// flux's "maintain" is write access, the most a Bitbucket
			// permission gives short of admin.
			githostserver.BitbucketServer: {"devs": "REPO_WRITE", "ops": "REPO_ADMIN"},
		},
	}, {
		name:        "create-personal-public",
		req:         gitprovider.Request{Repo: personal, Settings: gitprovider.Settings{Visibility: "public"}, Teams: map[string]string{"devs": ""}},
		key:         gitprovider.DeployKey{Title: title, Key: key1},
		wantKeys:    []githostserver.Key{{Title: title, Key: key1}},
		wantChanged: true,
		wantVis:     "public",
	}, {
		name: "existing-key-replaced",
		existing: &githostserver.Repo{Owner: "org", Name: "fleet", Visibility: "public",
			Keys: []githostserver.Key{{ID: 7, Title: "other", Key: key1, ReadOnly: true}, {ID: 8, Title: title, Key: key1, ReadOnly: true}}},
		req:         gitprovider.Request{Repo: org, Settings: gitprovider.Settings{Visibility: "private"}},
		key:         gitprovider.DeployKey{Title: title, Key: key2, ReadOnly: false},
		wantKeys:    []githostserver.Key{{ID: 7, Title: "other", Key: key1, ReadOnly: true}, {Title: title, Key: key2}},
		wantChanged: true,
		wantVis:     "public", // not reconciled
	}, {
		name: "existing-key-kept",
		existing: &githostserver.Repo{Owner: "org", Name: "fleet", Visibility: "private",
			Keys: []githostserver.Key{{ID: 8, Title: title, Key: key1 + " flux", ReadOnly: true}}, Teams: map[string]string{}},
		req:      gitprovider.Request{Repo: org, Settings: gitprovider.Settings{Visibility: "private"}},
		key:      gitprovider.DeployKey{Title: title, Key: key1, ReadOnly: true},
		wantKeys: []githostserver.Key{{ID: 8, Title: title, Key: key1 + " flux", ReadOnly: true}},
		wantVis:  "private",
	}, {
		name:         "reconcile-and-unknown-team",
		existing:     &githostserver.Repo{Owner: "org", Name: "fleet", Visibility: "public"},
		req:          gitprovider.Request{Repo: org, Settings: gitprovider.Settings{Visibility: "private"}, Reconcile: true, Teams: map[string]string{"nobody": "push"}},
		key:          gitprovider.DeployKey{Title: title, Key: key1, ReadOnly: true},
		wantKeys:     []githostserver.Key{{Title: title, Key: key1, ReadOnly: true}},
		wantChanged:  true,
		wantTeamsErr: true,
		wantVis:      "private",
	}}
	for _, kind := range hostKinds {
		for _, sc := range scenarios {
			t.Run(string(kind)+"/"+sc.name, func(t *testing.T) {
				ctx := context.Background()
				srv := githostserver.New(t, githostserver.Options{Kind: kind, Token: token, Groups: []string{"org"}, Teams: []string{"devs", "ops"}})
				if sc.existing != nil {
					srv.AddRepo(*sc.existing)
				}
				h := newHost(t, srv, kind, token)
				log := &logger{}
				repo, err := gitprovider.EnsureRepository(ctx, h, log, sc.req)
				if sc.wantTeamsErr != errors.Is(err, gitprovider.ErrTeams) || (err != nil && !sc.wantTeamsErr) {
					t.Fatalf("EnsureRepository: %v\n%s", err, strings.Join(log.lines, "\n"))
				}
				changed, err := gitprovider.EnsureDeployKey(ctx, h, repo, sc.key)
				if err != nil || changed != sc.wantChanged {
					t.Fatalf("EnsureDeployKey: changed %v, %v; want changed %v", changed, err, sc.wantChanged)
				}
				stored := srv.Repo(sc.req.Repo.String())
				if stored == nil {
					t.Fatalf("no repository %s on the host", sc.req.Repo)
				}
				assertKeys(t, stored.Keys, sc.wantKeys)
				if stored.Visibility != sc.wantVis {
					t.Errorf("visibility %q, want %q", stored.Visibility, sc.wantVis)
				}
				if want := sc.wantTeams[kind]; want != nil && fmt.Sprint(stored.Teams) != fmt.Sprint(want) {
					t.Errorf("teams %v, want %v", stored.Teams, want)
				}
				if want := "ssh://git@127.0.0.1/" + sc.req.Repo.String() + ".git"; repo.SSHURL != want {
					t.Errorf("SSH URL %q", repo.SSHURL)
				}
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"requests": srv.Requests(), "log": log.lines}); err != nil {
					t.Fatal(err)
				}
				out := buf.Bytes()
				if strings.Contains(string(out), token) {
					t.Errorf("the token was sent in a body or logged:\n%s", out)
				}
				out = []byte(strings.ReplaceAll(string(out), srv.Hostname, "HOST"))
				golden.Assert(t, filepath.Join("testdata", string(kind), sc.name+".json"), out)
			})
		}
	}
}

// assertKeys compares deploy keys, ignoring the IDs of keys the run added.
func assertKeys(t *testing.T, got, want []githostserver.Key) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("deploy keys %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		if want[i].ID == 0 {
			g.ID = 0
		}
		if g != want[i] {
			t.Errorf("deploy key %d: %+v, want %+v", i, g, want[i])
		}
	}
}

// TestErrors checks a refused token and a failing host: the error names
// what failed, never the token.
func TestErrors(t *testing.T) {
	for _, kind := range hostKinds {
		t.Run(string(kind), func(t *testing.T) {
			srv := githostserver.New(t, githostserver.Options{Kind: kind, Token: token, Groups: []string{"org"}})
			h := newHost(t, srv, kind, "wrong-"+token)
			_, err := gitprovider.EnsureRepository(context.Background(), h, &logger{}, gitprovider.Request{Repo: gitprovider.RepoRef{Owner: "org", Name: "fleet"}})
			if err == nil || !strings.Contains(err.Error(), `failed to get Git repository "org/fleet"`) || !strings.Contains(err.Error(), "401") {
				t.Errorf("wrong token: %v", err)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the token is in the error: %v", err)
			}
			h = newHost(t, srv, kind, token)
			_, err = gitprovider.EnsureRepository(context.Background(), h, &logger{}, gitprovider.Request{Repo: gitprovider.RepoRef{Owner: "nogroup", Name: "fleet"}})
			if err == nil || !strings.Contains(err.Error(), `failed to create new Git repository "nogroup/fleet"`) {
				t.Errorf("unknown organization: %v", err)
			}
		})
	}
}

func TestDeployKeyName(t *testing.T) {
	tests := []struct {
		ns, branch, secret, path, want string
	}{
		{"flux-system", "main", "flux-system", "./clusters/my-cluster", "flux-system-main-flux-system-./clusters/my-cluster"},
		{"flux-system", "main", "flux-system", "./", "flux-system-main-flux-system-./"},
		{"weir", "", "git", "", "weir-git"},
	}
	for _, tt := range tests {
		if got := gitprovider.DeployKeyName(tt.ns, tt.branch, tt.secret, tt.path); got != tt.want {
			t.Errorf("DeployKeyName(%q, %q, %q, %q) = %q, want %q", tt.ns, tt.branch, tt.secret, tt.path, got, tt.want)
		}
	}
}

func TestParseTeams(t *testing.T) {
	tests := []struct {
		flag    string
		in      []string
		want    string
		wantErr string
	}{
		{"team", []string{"devs", "ops:admin"}, "map[devs: ops:admin]", ""},
		{"team", []string{"ops:owner"}, "", `invalid permission "owner" for team "ops"`},
		{"team", []string{":push"}, "", `--team ":push" names no team`},
		{"group", []string{"ops:owner"}, "", `invalid permission "owner" for group "ops"`},
		{"group", []string{":push"}, "", `--group ":push" names no group`},
	}
	for _, tt := range tests {
		got, err := gitprovider.ParseTeams(tt.flag, tt.in)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseTeams(%v): error %v, want %q", tt.in, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || fmt.Sprint(got) != tt.want):
			t.Errorf("ParseTeams(%v) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestSSHURL(t *testing.T) {
	tests := []struct{ in, host, want string }{
		{"git@github.com:org/fleet.git", "", "ssh://git@github.com/org/fleet.git"},
		{"ssh://git@127.0.0.1:2222/org/fleet.git", "", "ssh://git@127.0.0.1:2222/org/fleet.git"},
		{"git@github.com:org/fleet.git", "ssh.github.com:443", "ssh://git@ssh.github.com:443/org/fleet.git"},
	}
	for _, tt := range tests {
		if got, err := gitprovider.SSHURL(tt.in, tt.host); err != nil || got != tt.want {
			t.Errorf("SSHURL(%q, %q) = %q, %v; want %q", tt.in, tt.host, got, err, tt.want)
		}
	}
	if _, err := gitprovider.SSHURL("https://github.com/org/fleet.git", ""); err == nil {
		t.Error("an https address was taken for SSH")
	}
}
