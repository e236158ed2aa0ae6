package clitest

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// Now is the clock every command under test reads: ten days after the
// tests start, so that ages print as "9d" whatever the machine's speed,
// and events stamped relative to it print exact ages.
var Now = time.Now().Add(10 * 24 * time.Hour).Truncate(time.Second)

// Result is what one run of weir printed and returned.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Buffer lets a test read what a command running in another goroutine has
// written so far.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Run runs weir with args against the test control plane, as a user with
// its kubeconfig would.
func Run(t *testing.T, args ...string) Result {
	t.Helper()
	return RunIO(context.Background(), t, "", nil, nil, args...)
}

// RunIO is Run with stdin, a context, and optional buffers to watch the
// output while the command runs.
func RunIO(ctx context.Context, t *testing.T, stdin string, stdout, stderr *Buffer, args ...string) Result {
	t.Helper()
	return RunReader(ctx, t, strings.NewReader(stdin), stdout, stderr, args...)
}

// RunReader is RunIO reading stdin from a reader, for tests that answer a
// prompt only once they have seen what it asks about.
func RunReader(ctx context.Context, t *testing.T, stdin io.Reader, stdout, stderr *Buffer, args ...string) Result {
	t.Helper()
	if stdout == nil {
		stdout = &Buffer{}
	}
	if stderr == nil {
		stderr = &Buffer{}
	}
	env := testenv.Get(t)
	streams := genericiooptions.IOStreams{In: stdin, Out: stdout, ErrOut: stderr}
	full := append([]string{"--kubeconfig", env.ControlPlane.KubeconfigPath()}, args...)
	code := cli.ExecuteContext(ctx, streams, full, func(d *clideps.Deps) {
		d.Now = func() time.Time { return Now }
		d.PollInterval = 50 * time.Millisecond
	})
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// WaitFor waits until b holds text.
func WaitFor(t *testing.T, b *Buffer, text string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func(context.Context) (bool, string) {
		return strings.Contains(b.String(), text), "output so far:\n" + b.String()
	})
}

// volatile matches what changes from run to run in printed objects.
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(uid"?: )"?[0-9a-f-]{36}"?`), `${1}UID`},
	{regexp.MustCompile(`(resourceVersion"?: )"\d+"`), `${1}"RV"`},
	{regexp.MustCompile(`(creationTimestamp"?: )"[^"]+"`), `${1}"TIME"`},
	{regexp.MustCompile(`(reconcile\.fluxcd\.io/requestedAt"?: )"?[^"\s,]+"?`), `${1}TOKEN`},
	{regexp.MustCompile(`(lastHandledReconcileAt"?: )"?[^"\s,]+"?`), `${1}TOKEN`},
}

// AssertGolden compares got with testdata/<name>, after replacing the
// test's namespaces with NS (NS2, …) and volatile fields with placeholders;
// -update rewrites the file instead.
func AssertGolden(t *testing.T, name, got string, namespaces ...string) {
	t.Helper()
	for i, ns := range namespaces {
		ph := "NS"
		if i > 0 {
			ph += string(rune('1' + i))
		}
		got = strings.ReplaceAll(got, ns, ph)
	}
	for _, v := range volatile {
		got = v.re.ReplaceAllString(got, v.repl)
	}
	golden.Assert(t, filepath.Join("testdata", name), []byte(got))
}

// Output is how the golden files hold a run: stdout, then stderr.
func (r Result) Output() string { return "stdout:\n" + r.Stdout + "stderr:\n" + r.Stderr }
