package cli_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func TestCreateImageUpdateExport(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"image/export-create-update.golden", []string{"image", "update", "flux-system", "--git-repo-ref=flux-system",
			"--git-repo-path=./clusters/my-cluster", "--checkout-branch=main", "--author-name=flux",
			"--author-email=flux@example.com", "--commit-template={{range .Changed.Changes}}{{println .NewValue}}{{end}}"}},
		{"image/export-create-update-push.golden", []string{"image", "update", "apps", "--git-repo-ref=flux-system",
			"--git-repo-namespace=flux-system", "--checkout-branch=main", "--push-branch=image-updates",
			"--author-name=flux", "--author-email=flux@example.com", "--interval=10m", "--label=team=apps",
			"--signing-key-secret=signing", "--signing-key-type=ssh"}},
	})
}

func TestCreateImageUpdateErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	base := []string{"image", "update", "auto"}
	for _, s := range []struct {
		args []string
		want string
	}{
		{nil, "✗ a reference to a GitRepository is required (--git-repo-ref)\n"},
		{[]string{"--git-repo-ref=app"}, "✗ the Git repository branch is required (--checkout-branch)\n"},
		{[]string{"--git-repo-ref=app", "--checkout-branch=main"}, "✗ the author name is required (--author-name)\n"},
		{[]string{"--git-repo-ref=app", "--checkout-branch=main", "--author-name=a"}, "✗ the author email is required (--author-email)\n"},
		{[]string{"--git-repo-ref=app", "--checkout-branch=main", "--author-name=a", "--author-email=a@b", "--signing-key-secret=k", "--signing-key-type=x509"},
			"✗ invalid signing key type 'x509', must be one of: gpg, ssh\n"},
	} {
		res := weir(t, append(append(append([]string{"create"}, base...), s.args...), "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// fullSHA matches a commit SHA.
var fullSHA = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// runSteps runs each step as `weir ARGS -n ns` and compares its output,
// through mask, with the golden file.
func runSteps(t *testing.T, ns string, mask func(string) string, steps []createStep) {
	t.Helper()
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, mask(res.Output()), ns)
	}
}

// TestImageUpdateCLIWithController runs create, get and reconcile image
// update against weir's image-automation controller and the in-process
// Git server.
func TestImageUpdateCLIWithController(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	controllers.Run(t, controllers.Options{Controllers: []string{"image-automation"}})
	ns := testenv.Get(t).Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	srv.Commit(t, "fleet.git", gitserver.Commit{Files: map[string]string{
		"clusters/dev/app.yaml": fmt.Sprintf("image: ghcr.io/stefanprodan/podinfo:5.0.0 # {\"$imagepolicy\": \"%s:podinfo\"}\n", ns),
	}})
	applyYAML(t, fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: fleet
  namespace: %[1]s
spec:
  interval: 1h
  url: %[2]s
  ref:
    branch: main
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: podinfo
  namespace: %[1]s
spec:
  imageRepositoryRef:
    name: podinfo
  policy:
    semver:
      range: 5.0.x
status:
  latestRef:
    name: ghcr.io/stefanprodan/podinfo
    tag: 5.0.3
  conditions:
  - type: Ready
    status: "True"
    reason: Succeeded
    message: Latest image tag for ghcr.io/stefanprodan/podinfo resolved to 5.0.3
    lastTransitionTime: "2026-11-01T10:00:00Z"
`, ns, srv.HTTPURL("fleet.git")))
	mask := func(s string) string {
		return scanTime.ReplaceAllString(fullSHA.ReplaceAllString(s, "SHA"), "TIME")
	}
	runSteps(t, ns, mask, []createStep{
		{"image/create-update.golden", []string{"create", "image", "update", "fleet", "--git-repo-ref=fleet",
			"--git-repo-path=./clusters/dev", "--checkout-branch=main", "--author-name=weir", "--author-email=weir@example.com",
			"--interval=1h"}},
		{"image/get-update-live.golden", []string{"get", "images", "update"}},
		{"image/reconcile-update.golden", []string{"reconcile", "image", "update", "fleet"}},
	})
	res := weir(t, "get", "images", "update", "fleet", "-n", ns, "-o", "yaml")
	if !strings.Contains(res.Stdout, "lastPushCommit: ") {
		t.Errorf("no push recorded:\n%s", res.Stdout)
	}
}
