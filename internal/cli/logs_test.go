package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLogsFile(t *testing.T) {
	const file = "--log-file=testdata/logs/controller.log"
	for _, s := range []struct {
		golden string
		code   int
		args   []string
	}{
		{"logs/namespace.golden", 0, []string{file}},
		{"logs/all.golden", 0, []string{file, "-A"}},
		{"logs/apps.golden", 0, []string{file, "-n", "apps"}},
		{"logs/error.golden", 0, []string{file, "-A", "--level=error"}},
		{"logs/kind-name.golden", 0, []string{file, "-A", "--kind=kustomization", "--name=APPS"}},
		{"logs/tail.golden", 0, []string{file, "-A", "--tail=2"}},
		{"logs/since-time.golden", 0, []string{file, "-A", "--since-time=2026-11-29T20:43:00Z"}},
		{"logs/bad-level.golden", 1, []string{file, "--level=warn"}},
		{"logs/both-since.golden", 1, []string{file, "--since=1m", "--since-time=2026-11-29T20:43:00Z"}},
	} {
		res := weir(t, append([]string{"logs"}, s.args...)...)
		if res.Code != s.code {
			t.Errorf("logs %v: exit %d, want %d\n%s", s.args, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output())
	}
}

func TestLogsFollowFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir-controller.log")
	first := `{"level":"info","ts":"2026-11-29T20:42:54.221Z","msg":"first","controllerKind":"GitRepository","namespace":"flux-system","name":"fleet"}` + "\n"
	if err := os.WriteFile(path, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan result)
	go func() { done <- weirIO(ctx, t, "", out, "logs", "-f", "--log-file", path) }()
	waitFor(t, out, "- first")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A line written in two pieces is printed once whole.
	_, _ = f.WriteString(`{"level":"error","ts":"2026-11-29T20:42:55.000Z","msg":"second",`)
	time.Sleep(200 * time.Millisecond)
	_, _ = f.WriteString(`"controllerKind":"GitRepository","namespace":"flux-system","name":"fleet","error":"boom"}` + "\n")
	f.Close()
	waitFor(t, out, "- second boom")
	cancel()
	res := <-done
	want := "2026-11-29T20:42:54.221Z info GitRepository/fleet.flux-system - first \n" +
		"2026-11-29T20:42:55.000Z error GitRepository/fleet.flux-system - second boom\n"
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("logs -f: exit %d\n%q\nwant\n%q\n%s", res.Code, res.Stdout, want, res.Stderr)
	}
}

func TestLogsPods(t *testing.T) {
	// The test cluster runs no Flux deployment, and its kubeconfig has no
	// weir dev log beside it: logs says so.
	res := weir(t, "logs", "--flux-namespace", "weir-no-such-ns")
	if res.Code != 1 || !strings.Contains(res.Stderr, `✗ no Flux pods found in namespace "weir-no-such-ns"`) {
		t.Errorf("logs without pods: exit %d\n%s", res.Code, res.Stderr)
	}
}
