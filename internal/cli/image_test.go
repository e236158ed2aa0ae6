package cli_test

import (
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/testenv"
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
