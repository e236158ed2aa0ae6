package cli_test

import (
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/cli/statscmd"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestStats(t *testing.T) {
	env := testenv.Get(t)
	ns, ns2 := env.Namespace(t), env.Namespace(t)
	applyFixture(t, "stats/objects.yaml", ns, ns2)

	res := weir(t, "stats", "-n", ns)
	if res.Code != 0 {
		t.Fatalf("stats: exit %d\n%s", res.Code, res.Stderr)
	}
	assertGolden(t, "stats/namespace.golden", res.Output(), ns)

	// Across namespaces, the other namespace's Kustomization counts too.
	res = weir(t, "stats", "-A")
	if !strings.Contains(res.Stdout, "\nKustomization        \t") {
		t.Errorf("stats -A:\n%s", res.Stdout)
	}
	if res := weir(t, "stats", "extra"); res.Code != 1 {
		t.Errorf("stats with an argument: exit %d", res.Code)
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{0: "-", 512: "512 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 3145728: "3.0 MiB", 5 << 40: "5.0 TiB"} {
		if got := statscmd.FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}
