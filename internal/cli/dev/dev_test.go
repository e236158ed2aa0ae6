package dev

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/scheme"
)

// demoToken is the plaintext of apps/dev/podinfo-token.sops.yaml, as
// examples/internal/gen encrypts it.
const demoToken = "weir-dev-demo-token"

// The example's Kustomizations, and its workloads.
var (
	wantKustomizations = []string{"flux-system", "infrastructure", "apps"}
	workloads          = []client.ObjectKey{{Namespace: "apps", Name: "podinfo"}}
)

// TestRunOnce runs `weir dev --once` twice in a row from a clean directory:
// first through Run, checking the cluster before it is torn down (every
// Kustomization Ready at the served repository's HEAD, the Secret
// decrypted, the Deployments Available), then through the cobra command
// as a user runs it. Each run must print the tree and leave no process
// behind.
func TestRunOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	dir := filepath.Join(t.TempDir(), "dev")

	var stdout, stderr bytes.Buffer
	checked := false
	opts := Options{Dir: dir, Once: true, Controllers: []string{"*"}, Timeout: 3 * time.Minute,
		OnReady: func(ctx context.Context, res *Result) error {
			checked = true
			checkConverged(ctx, t, res)
			return nil
		}}
	res, err := Run(context.Background(), opts, genericiooptions.IOStreams{Out: &stdout, ErrOut: &stderr})
	t.Logf("run 1, stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	if err != nil {
		t.Fatalf("run 1: %v", err)
	}
	if !checked {
		t.Fatal("run 1: OnReady was not called")
	}
	t.Logf("run 1: cluster ready in %s, example converged %s after start", res.Ready, res.Converged)
	checkOutput(t, stdout.String(), stderr.String(), res.Revision)
	if len(res.PIDs) != 5 {
		t.Errorf("run 1: started %d processes, want 5: %v", len(res.PIDs), res.PIDs)
	}
	assertStopped(t, res.PIDs)

	stdout.Reset()
	stderr.Reset()
	cmd := NewCommand(genericiooptions.IOStreams{Out: &stdout, ErrOut: &stderr}, &clideps.Deps{Timeout: 3 * time.Minute})
	cmd.SetArgs([]string{"--once", "--dir", dir})
	err = cmd.ExecuteContext(context.Background())
	t.Logf("run 2, stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	if err != nil {
		t.Fatalf("run 2: weir dev --once: %v", err)
	}
	m := regexp.MustCompile(`Ready at (main@sha1:[0-9a-f]{40})`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatal("run 2: no revision reported")
	}
	checkOutput(t, stdout.String(), stderr.String(), m[1])
	pids := map[string]int{}
	for _, m := range regexp.MustCompile(`([a-z-]+) \(pid (\d+)\)`).FindAllStringSubmatch(stderr.String(), -1) {
		pids[m[1]], _ = strconv.Atoi(m[2])
	}
	if len(pids) != 5 {
		t.Errorf("run 2: reported %d processes stopped, want 5: %v", len(pids), pids)
	}
	assertStopped(t, pids)
}

// checkOutput checks the progress lines and the tree of a converged run.
func checkOutput(t *testing.T, stdout, stderr, revision string) {
	t.Helper()
	for _, want := range []string{"✔ control plane ready", "✔ CRDs established", "✔ controllers running: source, source-watcher, kustomize, helm, notification",
		"kubeconfig: ", "✔ example repository at http://127.0.0.1:",
		"✔ ArtifactGenerator/platform: ", "✔ apps: ", "✔ infrastructure: ", "✔ every Kustomization is Ready at " + revision,
		"✔ example synced in", "✔ stopped every process weir dev started"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	// apps dependsOn infrastructure: it is applied after. Whether the wait
	// itself shows ("◎ apps: waiting for dependency …") depends on whether
	// apps is first reconciled before infrastructure is Ready: a timing,
	// not a rule.
	infra, apps := strings.Index(stderr, "✔ infrastructure: Applied revision"), strings.Index(stderr, "✔ apps: Applied revision")
	if infra < 0 || apps < 0 || apps < infra {
		t.Errorf("apps applied before infrastructure (at %d, %d)", apps, infra)
	}
	// The first screen shows waits (the source not fetched yet, a
	// dependency not ready) as waits: nothing has failed.
	if strings.Contains(stderr, "✗ ") {
		t.Errorf("stderr shows a failure")
	}
	for _, want := range []string{"Kustomization/flux-system/flux-system\n", "── Kustomization/flux-system/apps\n",
		"── Deployment/apps/podinfo\n", "── Secret/apps/podinfo-token\n", "── Namespace/apps\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tree lacks %q", want)
		}
	}
}

// TestRunFollowsPushes keeps weir dev running and follows the hint it
// prints, in its working clone: append `  replicas: "3"` to
// clusters/dev/cluster-vars.yaml, commit, push. At the moment weir dev is
// about to print "rolled out" (OnRollout runs just before), the cluster
// must hold the new state: every Kustomization at the pushed revision and
// the podinfo Deployment at 3 replicas, in spec and in status. Nothing
// here waits for a time to pass; then the context is cancelled as Ctrl-C
// does.
func TestRunFollowsPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ready := make(chan *Result, 1)
	rolledOut := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	var atRollout []string // what was not yet so when weir dev said "rolled out"
	go func() {
		opts := Options{Dir: filepath.Join(t.TempDir(), "dev"), Controllers: []string{"*"}, Timeout: 3 * time.Minute,
			OnReady: func(_ context.Context, res *Result) error { ready <- res; return nil },
			OnRollout: func(ctx context.Context, res *Result, revision string) error {
				c := clientFor(t, res.Kubeconfig)
				if ok, state := kustomizationsReady(ctx, c, revision); !ok {
					atRollout = append(atRollout, state)
				}
				if ok, state := deploymentAvailable(ctx, c, workloads[0], 3); !ok {
					atRollout = append(atRollout, state)
				}
				rolledOut <- revision
				return nil
			}}
		res, err := Run(ctx, opts, genericiooptions.IOStreams{Out: &stdout, ErrOut: stderr})
		done <- outcome{res, err}
	}()
	var res *Result
	select {
	case res = <-ready:
	case o := <-done:
		t.Fatalf("weir dev returned before converging: %v\n%s", o.err, stderr.String())
	}

	pushed := time.Now()
	revision := pushHint(t, res.Clone)
	select {
	case got := <-rolledOut:
		if got != revision {
			t.Errorf("weir dev rolled out %s, pushed %s", got, revision)
		}
	case o := <-done:
		t.Fatalf("weir dev returned before rolling out the push: %v\n%s", o.err, stderr.String())
	}
	t.Logf("push to rolled out (test's clock) of %s: %s", revision, time.Since(pushed).Round(time.Millisecond))
	for _, state := range atRollout {
		t.Errorf("weir dev said rolled out before: %s", state)
	}
	testenv.Eventually(t, 10*time.Second, func(context.Context) (bool, string) {
		return strings.Contains(stderr.String(), "✔ "+revision+" rolled out in"), "weir dev has not printed the rollout"
	})
	if m := regexp.MustCompile(`rolled out in (\S+) after the push`).FindStringSubmatch(stderr.String()); m != nil {
		t.Logf("weir dev: push to rolled out in %s", m[1])
	}

	cancel()
	o := <-done
	t.Logf("stderr:\n%s", stderr.String())
	if o.err != nil {
		t.Fatalf("weir dev: %v", o.err)
	}
	for _, want := range []string{"◎ running; press Ctrl-C to stop", "try a push: cd " + res.Clone,
		"► push received: " + revision + "; calling the webhook of Receiver/fleet", "✔ " + revision + " rolled out in",
		"✔ stopped every process weir dev started"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(stderr.String(), "✗ ") {
		t.Errorf("weir dev printed a failure")
	}
	assertStopped(t, o.res.PIDs)
}

// pushHint runs, in the working clone, the push weir dev's hint prints
// (`echo '  replicas: "3"' >> clusters/dev/cluster-vars.yaml && git commit
// -qam ... && git push -q`) and returns the pushed revision.
func pushHint(t *testing.T, clone string) string {
	t.Helper()
	vars := filepath.Join(clone, "clusters/dev/cluster-vars.yaml")
	file, err := os.OpenFile(vars, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteString("  replicas: \"3\"\n"); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"commit", "-qam", "dev: three replicas"}, {"push", "-q"}} {
		if out, err := exec.Command("git", append([]string{"-C", clone}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return "main@sha1:" + strings.TrimSpace(string(head))
}

// syncBuffer is a bytes.Buffer that Run writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkConverged asserts what a converged run leaves in the cluster.
func checkConverged(ctx context.Context, t *testing.T, res *Result) {
	t.Helper()
	head, err := exec.Command("git", "-C", res.Clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("reading HEAD of %s: %v", res.Clone, err)
	}
	revision := "main@sha1:" + strings.TrimSpace(string(head))
	if res.Revision != revision {
		t.Errorf("converged at %s, HEAD is %s", res.Revision, revision)
	}
	c := clientFor(t, res.Kubeconfig)
	if ok, state := kustomizationsReady(ctx, c, revision); !ok {
		t.Errorf("Kustomizations: %s", state)
	}
	for _, w := range workloads {
		if ok, state := deploymentAvailable(ctx, c, w, 2); !ok {
			t.Errorf("%s", state)
		}
	}
	if _, err := fs.Stat(examples.Fleet(), "apps/dev/podinfo-token.sops.yaml"); err != nil {
		t.Logf("the example has no encrypted Secret: %v", err)
		return
	}
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "podinfo-token"}, &secret); err != nil {
		t.Fatalf("decrypted Secret: %v", err)
	}
	if got := string(secret.Data["token"]); got != demoToken {
		t.Errorf("Secret apps/podinfo-token: token = %q, want %q", got, demoToken)
	}
}

// kustomizationsReady reports whether the example's Kustomizations are all
// Ready, at their generation, having applied revision.
func kustomizationsReady(ctx context.Context, c client.Client, revision string) (bool, string) {
	var notReady []string
	for _, name := range wantKustomizations {
		var k kustomizev1.Kustomization
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &k); err != nil {
			notReady = append(notReady, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		want := revision
		if ref := k.Spec.SourceRef; ref.Kind == sourcev1.ExternalArtifactKind {
			// Built from a generated artifact: applied the artifact's
			// revision, the artifact copied from revision.
			var ea sourcev1.ExternalArtifact
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, &ea); err != nil || ea.Status.Artifact == nil {
				notReady = append(notReady, fmt.Sprintf("%s: ExternalArtifact %s: %v, artifact %v", name, ref.Name, err, ea.Status.Artifact))
				continue
			}
			if origin := ea.Status.Artifact.Metadata[sourceextensionsv1beta1.OriginRevisionAnnotation]; origin != revision {
				notReady = append(notReady, fmt.Sprintf("%s: ExternalArtifact %s copied from %q", name, ref.Name, origin))
			}
			want = ea.Status.Artifact.Revision
		}
		ready := conditions.Get(&k, meta.ReadyCondition)
		if ready == nil || !readyOrRerunning(ready) || ready.ObservedGeneration != k.Generation ||
			k.Status.LastAppliedRevision != want {
			notReady = append(notReady, fmt.Sprintf("%s: applied %q (want %q), Ready %v", name, k.Status.LastAppliedRevision, want, ready))
		}
	}
	return len(notReady) == 0, strings.Join(notReady, "; ")
}

// readyOrRerunning accepts Ready=True, or a later run of a Kustomization
// that already applied the revision: every reconcile marks Ready Unknown
// (Progressing) while it runs, as Flux's controller does, and a dependency
// or a followed ConfigMap may start one just after weir dev saw all Ready.
func readyOrRerunning(ready *metav1.Condition) bool {
	return ready.Status == metav1.ConditionTrue ||
		(ready.Status == metav1.ConditionUnknown && ready.Reason == meta.ProgressingReason)
}

// deploymentAvailable reports whether the Deployment is Available with
// replicas ready and up to date.
func deploymentAvailable(ctx context.Context, c client.Client, key client.ObjectKey, replicas int32) (bool, string) {
	var d appsv1.Deployment
	if err := c.Get(ctx, key, &d); err != nil {
		return false, err.Error()
	}
	available := false
	for _, cond := range d.Status.Conditions {
		if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
			available = true
		}
	}
	ok := available && d.Spec.Replicas != nil && *d.Spec.Replicas == replicas &&
		d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == replicas &&
		d.Status.UpdatedReplicas == replicas
	return ok, fmt.Sprintf("Deployment %s: available=%v, %d/%d replicas available", key, available, d.Status.AvailableReplicas, replicas)
}

func clientFor(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// assertStopped fails if a process the run started is still alive.
func assertStopped(t *testing.T, pids map[string]int) {
	t.Helper()
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) still running after weir dev returned", name, pid)
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat))
	return len(fields) > 2 && fields[2] != "Z"
}
