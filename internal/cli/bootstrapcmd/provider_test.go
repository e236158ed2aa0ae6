package bootstrapcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/githostserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

const apiToken = "pat-0123456789abcdef"

// TestBootstrapProviders bootstraps a namespace of its own per host, as
// a user would with `weir bootstrap github|gitea|gitlab`: the host's API
// (a fake on 127.0.0.1 recording what it is sent) creates the repository
// on a real Git server, the CLI pushes there over HTTPS with the token,
// and the cluster syncs with the token (--token-auth); then again over
// SSH, the cluster's deploy key added through the API; then once more,
// with nothing left to do.
func TestBootstrapProviders(t *testing.T) {
	hosts := []struct {
		kind githostserver.Kind
		env  string
		ns   string
		// team is the flag giving access, perm what a name alone gets.
		team, perm string
		// page is the repository's page on the host, below its address.
		page string
		// user is the Git user over HTTPS, which only Bitbucket Server
		// checks (--username).
		user string
	}{
		{githostserver.GitHub, "GITHUB_TOKEN", "gh-system", "team", "maintain", "/org/fleet", ""},
		{githostserver.Gitea, "GITEA_TOKEN", "gitea-system", "team", "maintain", "/org/fleet", ""},
		{githostserver.GitLab, "GITLAB_TOKEN", "gl-system", "team", "maintain", "/org/fleet", ""},
		{githostserver.BitbucketServer, "BITBUCKET_TOKEN", "bbs-system", "group", "push", "/projects/org/repos/fleet/browse", "flux-bot"},
	}
	for _, h := range hosts {
		t.Run(string(h.kind), func(t *testing.T) {
			user := "git"
			if h.user != "" {
				user = h.user
			}
			git := gitserver.New(t, gitserver.Options{Username: user, Password: apiToken, TLS: true})
			api := githostserver.New(t, githostserver.Options{
				Kind: h.kind, Token: apiToken, Groups: []string{"org"}, Teams: []string{"devs"},
				Git:      func(path string) (string, string) { return git.HTTPURL(path + ".git"), git.SSHURL(path + ".git") },
				OnCreate: func(path string) { git.InitRepo(t, path+".git") },
				OnDeployKey: func(_ string, k githostserver.Key) {
					if key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.Key)); err == nil {
						git.AuthorizeKey(key)
					}
				},
			})
			caFile := filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(caFile, append(git.CAPEM(), api.CAPEM()...), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv(h.env, apiToken)
			controllers.Run(t, controllers.Options{
				Controllers: []string{"source", "kustomize"},
				Deployment:  client.ObjectKey{Namespace: h.ns, Name: "source-controller"},
			})
			args := []string{"bootstrap", string(h.kind), "-n", h.ns, "--owner=org", "--repository=fleet",
				"--hostname=" + api.Hostname, "--ca-file=" + caFile, "--path=clusters/dev", "--" + h.team + "=devs",
				"--interval=1s", "--author-email=flux@example.com", "--silent"}
			if h.user != "" {
				args = append(args, "--username="+h.user)
			}

			// 1. --token-auth: the repository is created, the cluster
			// fetches over HTTPS with the token.
			start := time.Now()
			res := clitest.Run(t, append(args, "--token-auth")...)
			t.Logf("bootstrap %s --token-auth: %s", h.kind, time.Since(start).Round(time.Millisecond))
			if res.Code != 0 {
				t.Fatalf("bootstrap --token-auth: exit %d\n%s", res.Code, res.Output())
			}
			assertNoToken(t, res)
			for _, want := range []string{`repository "https://` + api.Hostname + h.page + `" created`,
				`granted "` + h.perm + `" permissions to "devs"`, "installing components", "bootstrap finished"} {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("bootstrap --token-auth did not print %q:\n%s", want, res.Stderr)
				}
			}
			repoPath := filepath.Join(git.Dir(), "org/fleet.git")
			head := revParse(t, repoPath)
			for _, f := range []string{"gotk-components.yaml", "gotk-sync.yaml", "kustomization.yaml"} {
				if gitOut(t, repoPath, "show", "main:clusters/dev/flux-system/"+f) == "" {
					t.Errorf("%s was not pushed", f)
				}
			}
			assertSyncedIn(t, h.ns, "main@sha1:"+head, git.HTTPURL("org/fleet.git"))
			var secret corev1.Secret
			getIn(t, h.ns, &secret)
			if string(secret.Data["username"]) != user || string(secret.Data["password"]) != apiToken {
				t.Errorf("source secret holds username %q and not the token", secret.Data["username"])
			}
			if stored := api.Repo("org/fleet"); stored == nil || stored.Visibility != "private" || len(stored.Keys) != 0 {
				t.Errorf("repository on the host: %+v (want private, no deploy key with --token-auth)", stored)
			}
			assertRequests(t, api, filepath.Join("testdata", "provider", string(h.kind)+"-token-auth.json"))

			// 2. SSH: the cluster gets a generated deploy key, added
			// read-only through the API; the CLI still pushes over HTTPS.
			start = time.Now()
			res = clitest.Run(t, args...)
			t.Logf("bootstrap %s over ssh (a move): %s", h.kind, time.Since(start).Round(time.Millisecond))
			if res.Code != 0 {
				t.Fatalf("bootstrap over ssh: exit %d\n%s", res.Code, res.Output())
			}
			assertNoToken(t, res)
			title := h.ns + "-main-flux-system-./clusters/dev"
			if !strings.Contains(res.Stderr, `configured deploy key "`+title+`"`) {
				t.Errorf("bootstrap over ssh did not configure the deploy key:\n%s", res.Stderr)
			}
			stored := api.Repo("org/fleet")
			if len(stored.Keys) != 1 || stored.Keys[0].Title != title || !stored.Keys[0].ReadOnly {
				t.Errorf("deploy keys on the host: %+v", stored.Keys)
			}
			getIn(t, h.ns, &secret)
			if !bytes.Equal(bytes.TrimSpace(secret.Data["identity.pub"]), []byte(stored.Keys[0].Key)) {
				t.Errorf("the deploy key on the host is not the source secret's")
			}
			assertSyncedIn(t, h.ns, "main@sha1:"+revParse(t, repoPath), git.SSHURL("org/fleet.git"))
			assertRequests(t, api, filepath.Join("testdata", "provider", string(h.kind)+"-ssh.json"))

			// 3. Again: nothing to create, commit or add.
			res = clitest.Run(t, args...)
			if res.Code != 0 || !strings.Contains(res.Stderr, "component manifests are up to date") ||
				strings.Contains(res.Stderr, "configured deploy key") || strings.Contains(res.Stderr, "created") {
				t.Errorf("bootstrap again: exit %d\n%s", res.Code, res.Stderr)
			}
			assertRequests(t, api, filepath.Join("testdata", "provider", string(h.kind)+"-again.json"))

			// 4. A team the host does not know: reported, the bootstrap
			// still done, and the command fails at the end, as flux's.
			res = clitest.Run(t, append(args, "--"+h.team+"=ghosts")...)
			if res.Code != 1 || !strings.Contains(res.Stderr, `failed to grant "`+h.perm+`" permissions to "ghosts"`) ||
				!strings.Contains(res.Stderr, "all components are healthy") ||
				!strings.Contains(res.Stderr, "bootstrap completed with errors: failed to grant permissions to team") {
				t.Errorf("bootstrap with an unknown team: exit %d\n%s", res.Code, res.Stderr)
			}
		})
	}
}

// TestBitbucketServerErrors covers what Bitbucket Server's command
// refuses before Git: no --hostname (it has no default), a token the
// server refuses (its own message, never the token), a project that does
// not exist.
func TestBitbucketServerErrors(t *testing.T) {
	api := githostserver.New(t, githostserver.Options{Kind: githostserver.BitbucketServer, Token: apiToken, Groups: []string{"PRJ"}})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, api.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"bootstrap", "bitbucket-server", "--ca-file=" + caFile, "--repository=fleet", "--silent"}
	tests := []struct {
		name  string
		token string
		args  []string
		want  []string
	}{{
		name:  "no hostname",
		token: apiToken,
		args:  []string{"--owner=PRJ"},
		want:  []string{`invalid hostname ""`},
	}, {
		name:  "token refused",
		token: "wrong-" + apiToken,
		args:  []string{"--owner=PRJ", "--hostname=" + api.Hostname},
		want: []string{`failed to get Git repository "PRJ/fleet"`, "GET /rest/api/1.0/projects/PRJ/repos/fleet: 401 Unauthorized",
			"Authentication failed. Please check your credentials and try again."},
	}, {
		name:  "no such project",
		token: apiToken,
		args:  []string{"--owner=NOPE", "--hostname=" + api.Hostname},
		want:  []string{`failed to create new Git repository "NOPE/fleet"`, "404 Not Found: Project NOPE does not exist."},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BITBUCKET_TOKEN", tt.token)
			res := clitest.Run(t, append(append([]string(nil), base...), tt.args...)...)
			if res.Code != 1 {
				t.Errorf("exit %d, want 1\n%s", res.Code, res.Output())
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
				}
			}
			if strings.Contains(res.Output(), tt.token) {
				t.Errorf("the token was printed:\n%s", res.Output())
			}
		})
	}
}

func assertNoToken(t *testing.T, res clitest.Result) {
	t.Helper()
	if strings.Contains(res.Output(), apiToken) {
		t.Errorf("the token was printed:\n%s", res.Output())
	}
}

// assertRequests compares what the API was sent since the last call with
// a golden file, the server's port replaced by HOST.
func assertRequests(t *testing.T, api *githostserver.Server, path string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	reqs := api.Requests()
	for i := range reqs {
		if k, ok := reqs[i].Body["key"].(string); ok && k != "" {
			reqs[i].Body["key"] = "<generated public key>"
		}
		// Bitbucket Server's access key: {"key": {"text": …, "label": …}}.
		if k, ok := reqs[i].Body["key"].(map[string]any); ok && k["text"] != nil {
			k["text"] = "<generated public key>"
		}
	}
	if err := enc.Encode(reqs); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, path, []byte(strings.ReplaceAll(buf.String(), api.Hostname, "HOST")))
}

// assertSyncedIn checks the sync objects of ns are Ready at revision, the
// GitRepository at url.
func assertSyncedIn(t *testing.T, ns, revision, url string) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, func(_ context.Context) (bool, string) {
		var repo sourcev1.GitRepository
		var ks kustomizev1.Kustomization
		getIn(t, ns, &repo)
		getIn(t, ns, &ks)
		got := ""
		if repo.Status.Artifact != nil {
			got = repo.Status.Artifact.Revision
		}
		return repo.Spec.URL == url && got == revision && ks.Status.LastAppliedRevision == revision,
			"url " + repo.Spec.URL + ", artifact " + got + ", applied " + ks.Status.LastAppliedRevision + ", want " + revision
	})
}

// getIn reads the object flux-system of ns, what bootstrap names its
// sync objects and source Secret.
func getIn(t *testing.T, ns string, obj client.Object) {
	t.Helper()
	if err := testenv.Get(t).Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "flux-system"}, obj); err != nil {
		t.Fatalf("get %T %s/flux-system: %v", obj, ns, err)
	}
}

func revParse(t *testing.T, repoPath string) string {
	t.Helper()
	return strings.TrimSpace(gitOut(t, repoPath, "rev-parse", "main"))
}

// gitOut runs git on a bare repository, "" when it fails.
func gitOut(t *testing.T, repoPath string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", repoPath}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// TestProviderErrors covers what fails before Git: the token read from
// stdin and refused, a bad --team, missing flags, a team the host does not
// know. The token never shows.
func TestProviderErrors(t *testing.T) {
	api := githostserver.New(t, githostserver.Options{Kind: githostserver.GitHub, Token: apiToken, Groups: []string{"org"}})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, api.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"bootstrap", "github", "--hostname=" + api.Hostname, "--ca-file=" + caFile, "--silent"}
	tests := []struct {
		name  string
		env   string
		stdin string
		args  []string
		want  []string
	}{{
		name:  "token from stdin, refused",
		stdin: "wrong-" + apiToken + "\n",
		args:  []string{"--owner=org", "--repository=fleet"},
		want:  []string{"Please enter your GitHub personal access token (PAT): ", `failed to get Git repository "org/fleet"`, "401"},
	}, {
		name: "no token anywhere",
		args: []string{"--owner=org", "--repository=fleet"},
		want: []string{"GITHUB_TOKEN environment variable not found"},
	}, {
		name: "bad team permission",
		env:  apiToken,
		args: []string{"--owner=org", "--repository=fleet", "--team=devs:owner"},
		want: []string{`invalid permission "owner" for team "devs", can be: pull, triage, push, maintain, admin`},
	}, {
		name: "no owner",
		env:  apiToken,
		args: []string{"--repository=fleet"},
		want: []string{"--owner and --repository are required"},
	}, {
		name: "unknown organization",
		env:  apiToken,
		args: []string{"--owner=nobody", "--repository=fleet"},
		want: []string{`failed to create new Git repository "nobody/fleet"`, "404"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GITHUB_TOKEN", tt.env)
			res := clitest.RunIO(context.Background(), t, tt.stdin, nil, nil, append(append([]string(nil), base...), tt.args...)...)
			if res.Code != 1 {
				t.Errorf("exit %d, want 1\n%s", res.Code, res.Output())
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
				}
			}
			assertNoToken(t, res)
		})
	}
}
