package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// TestGetImages lists the image automation kinds with the flux CLI's
// columns: LAST SCAN for repositories, IMAGE and TAG (no SUSPENDED) for
// policies, LAST RUN for update automations.
func TestGetImages(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	ns := testenv.Get(t).Namespace(t)
	applyFixture(t, "image/objects.yaml", ns)

	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"all", []string{"get", "images", "all"}, "image/get-all.golden"},
		{"repository", []string{"get", "images", "repository"}, "image/get-repository.golden"},
		{"policy alias", []string{"get", "image", "policy", "podinfo"}, "image/get-policy.golden"},
		{"update", []string{"get", "images", "update"}, "image/get-update.golden"},
		{"get all includes images", []string{"get", "all"}, "image/get-all-kinds.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := weir(t, append(tt.args, "-n", ns)...)
			if res.Code != 0 {
				t.Errorf("exit code %d; stderr:\n%s", res.Code, res.Stderr)
			}
			assertGolden(t, tt.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
		})
	}
}

// TestSuspendResumeImageKinds runs the registry's verbs under `image`.
func TestSuspendImageKinds(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	applyFixture(t, "image/objects.yaml", ns)
	for _, args := range [][]string{
		{"suspend", "image", "policy", "podinfo"},
		{"suspend", "image", "update", "flux-system"},
	} {
		res := weir(t, append(args, "-n", ns)...)
		if res.Code != 0 {
			t.Fatalf("%v: exit code %d; stderr:\n%s", args, res.Code, res.Stderr)
		}
	}
	res := weir(t, "get", "images", "update", "-n", ns, "--no-header")
	assertGolden(t, "image/get-update-suspended.golden", "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
	res = weir(t, "export", "image", "policy", "podinfo", "-n", ns)
	assertGolden(t, "image/export-policy.golden", "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
}

func TestCreateImageExport(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"image/export-create-repository.golden", []string{"image", "repository", "podinfo",
			"--image=ghcr.io/stefanprodan/podinfo", "--interval=10m", "--secret-ref=regcred", "--cert-ref=ca", "--scan-timeout=1m"}},
		{"image/export-create-policy-semver.golden", []string{"image", "policy", "podinfo-semver", "--image-ref=podinfo",
			"--interval=10m", "--reflect-digest=Always", "--select-semver=5.0.x"}},
		{"image/export-create-policy-numeric.golden", []string{"image", "policy", "podinfo", "--image-ref=podinfo",
			"--select-numeric=asc", "--filter-regex=^main-[a-f0-9]+-(?P<ts>[0-9]+)", "--filter-extract=$ts", "--label=team=apps"}},
	})
}

func TestCreateImageErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"image", "repository", "podinfo"}, "✗ an image repository (--image) is required\n"},
		{[]string{"image", "repository", "podinfo", "--image=ghcr.io/Pod Info"}, "✗ unable to parse image value: repository can only contain the characters `abcdefghijklmnopqrstuvwxyz0123456789_-./`: Pod Info\n"},
		{[]string{"image", "policy", "podinfo"}, "✗ the name of an ImageRepository in the namespace is required (--image-ref)\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo"}, "✗ a policy must be provided with either --select-semver, --select-alpha or --select-numeric\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo", "--select-semver=1.x", "--select-alpha=asc"}, "✗ only one of --select-semver, --select-alpha or --select-numeric can be specified\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo", "--select-semver=not a range"}, "✗ --select-semver is not a valid semver constraint: improper constraint: \"not a range\"\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo", "--select-alpha=newest"}, "✗ --select-alpha must be one of [asc, desc]\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo", "--select-numeric=asc", "--filter-extract=$ts"}, "✗ cannot specify --filter-extract without specifying --filter-regex\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo", "--select-numeric=asc", "--filter-regex=("}, "✗ --filter-regex is an invalid regex pattern: error parsing regexp: missing closing ): `(`\n"},
		{[]string{"image", "policy", "podinfo", "--image-ref=podinfo", "--select-numeric=asc", "--reflect-digest=Sometimes"}, "✗ invalid digest reflection policy 'Sometimes', must be one of: Never, IfNotPresent, Always\n"},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// scanTime matches the LAST SCAN column.
var scanTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// TestImageCLIWithController runs the image CLI against weir's
// image-reflector and the in-process registry: create, get and reconcile,
// with flux's lines.
func TestImageCLIWithController(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	controllers.Run(t, controllers.Options{Controllers: []string{"image-reflector"}})
	ns := testenv.Get(t).Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "stefanprodan/podinfo", "podinfo", "5.0.0", "5.0.3", "5.1.0", "6.0.0", "latest")
	mask := func(s string) string {
		return scanTime.ReplaceAllString(strings.ReplaceAll(s, reg.Host(), "REGISTRY"), "TIME")
	}
	runSteps(t, ns, mask, []createStep{
		{"image/create-repository.golden", []string{"create", "image", "repository", "podinfo",
			"--image=" + reg.Host() + "/stefanprodan/podinfo", "--interval=10m"}},
		{"image/create-policy.golden", []string{"create", "image", "policy", "podinfo-semver", "--image-ref=podinfo",
			"--interval=10m", "--reflect-digest=Always", "--select-semver=5.0.x"}},
		{"image/create-policy-regex.golden", []string{"create", "image", "policy", "podinfo-regex", "--image-ref=podinfo",
			"--select-semver=>4.0.0", "--filter-regex=5\\.0\\.0"}},
		{"image/get-all-live.golden", []string{"get", "images", "all"}},
		{"image/reconcile-repository.golden", []string{"reconcile", "image", "repository", "podinfo"}},
		{"image/reconcile-policy.golden", []string{"reconcile", "image", "policy", "podinfo-semver"}},
	})
}
