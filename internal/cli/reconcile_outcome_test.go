package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// failFastBound is how long a reconcile the controller failed at once may
// take in these tests, far below the --timeout they pass (2m): a command
// that waits out its timeout is cut here and fails the test. It is loose
// on purpose (the command takes well under a second on an idle machine);
// the elapsed time is logged.
const failFastBound = 30 * time.Second

// stub is a stand-in controller for one object of a test case.
type stub struct {
	kind  kinds.Kind
	name  string
	react func(*unstructured.Unstructured) map[string]any
}

// failure is how a controller ends a run that failed: Ready=False with
// reason and message, plus extra conditions, and status.observedGeneration
// as given (-1, a generation behind, or "current" when nil), as the kinds
// of controllers leave it.
func failure(reason, msg string, observedGeneration any, extra ...map[string]any) map[string]any {
	conds := []any{map[string]any{"type": "Ready", "status": "False", "reason": reason, "message": msg,
		"lastTransitionTime": "2026-11-01T10:00:00Z"}}
	for _, c := range extra {
		conds = append(conds, c)
	}
	s := map[string]any{"conditions": conds}
	if observedGeneration != nil {
		s["observedGeneration"] = observedGeneration
	}
	return s
}

// retrying is the Reconciling condition of a failure the controller will
// retry (conditions.MarkFailed).
func retrying(msg string) map[string]any {
	return map[string]any{"type": "Reconciling", "status": "True", "reason": meta.ProgressingWithRetryReason,
		"message": msg, "lastTransitionTime": "2026-11-01T10:00:00Z"}
}

// stalledCond is Stalled=True (conditions.MarkStalled).
func stalledCond(reason, msg string) map[string]any {
	return map[string]any{"type": "Stalled", "status": "True", "reason": reason, "message": msg,
		"lastTransitionTime": "2026-11-01T10:00:00Z"}
}

// TestReconcileFailsFast is issue 33: a reconcile the controller handled
// and failed at once ends the command at once, with the Ready reason and
// message, for every kind `reconcile` waits for, and for --with-source
// when the source fails (the dependent is then not even asked). The
// Kustomization and HelmRelease stand-ins leave status.observedGeneration
// behind, as kustomize- and helm-controller do on a failure they retry:
// before the fix the command waited out --timeout on those.
func TestReconcileFailsFast(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "reconcile/failing.yaml", ns)
	// ks-edited was good at generation 1; its path is now broken.
	ksEdited := kinds.Kustomization.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "ks-edited"), ksEdited); err != nil {
		t.Fatal(err)
	}
	writeStatus(t, ksEdited, map[string]any{"observedGeneration": int64(1),
		"lastAppliedRevision": fetchedRev, "conditions": readyCondition("ReconciliationSucceeded", "Applied revision: "+fetchedRev)})
	if err := unstructured.SetNestedField(ksEdited.Object, "./nope", "spec", "path"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(t.Context(), ksEdited); err != nil {
		t.Fatal(err)
	}
	if ksEdited.GetGeneration() != 2 {
		t.Fatalf("ks-edited generation %d, want 2", ksEdited.GetGeneration())
	}

	const (
		pathNotFound = "kustomization path not found: stat nope: no such file or directory"
		gitFailed    = "failed to checkout and determine revision: unable to clone 'http://127.0.0.1:1/missing.git': connection refused"
	)
	ready := func(reason, msg string, more map[string]any) map[string]any {
		s := map[string]any{"conditions": readyCondition(reason, msg)}
		for k, v := range more {
			s[k] = v
		}
		return s
	}
	artifact := map[string]any{"artifact": map[string]any{"path": "x.tgz", "url": "http://127.0.0.1/x.tgz", "revision": "17.3.14",
		"digest": "sha256:7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b", "lastUpdateTime": "2026-11-01T10:00:00Z"}}

	for _, tt := range []struct {
		name  string
		args  []string
		stubs []stub
		// want is the command's last line.
		want string
		// notAsked names an object the command must not have annotated.
		notAsked *stub
	}{
		{
			name: "kustomization created with a missing path (observedGeneration -1)",
			args: []string{"ks", "ks-nope"},
			stubs: []stub{{kinds.Kustomization, "ks-nope", onRequest(failure(meta.ArtifactFailedReason, pathNotFound, int64(-1),
				retrying(pathNotFound)))}},
			want: "✗ Kustomization reconciliation failed: ArtifactFailed: '" + pathNotFound + "'",
		},
		{
			name: "kustomization whose path was changed to a missing one (observedGeneration behind)",
			args: []string{"kustomization", "ks-edited"},
			stubs: []stub{{kinds.Kustomization, "ks-edited", onRequest(failure(meta.ArtifactFailedReason, pathNotFound, int64(1),
				retrying(pathNotFound)))}},
			want: "✗ Kustomization reconciliation failed: ArtifactFailed: '" + pathNotFound + "'",
		},
		{
			name: "kustomization waiting for a dependency",
			args: []string{"ks", "ks-dependent"},
			stubs: []stub{{kinds.Kustomization, "ks-dependent", onRequest(failure(meta.DependencyNotReadyReason,
				"dependency '"+ns+"/ks-nope' is not ready", int64(-1)))}},
			want: "✗ Kustomization reconciliation failed: DependencyNotReady: 'dependency '" + ns + "/ks-nope' is not ready'",
		},
		{
			name: "kustomization waiting for its source's first artifact",
			args: []string{"ks", "ks-no-artifact"},
			stubs: []stub{{kinds.Kustomization, "ks-no-artifact", onRequest(failure(meta.ArtifactFailedReason,
				"Source artifact not found, retrying in 30s", int64(-1)))}},
			want: "✗ Kustomization reconciliation failed: ArtifactFailed: 'Source artifact not found, retrying in 30s'",
		},
		{
			name: "helmrelease install failed, to be retried",
			args: []string{"hr", "hr-bad"},
			stubs: []stub{{kinds.HelmRelease, "hr-bad", onRequest(failure("InstallFailed",
				"Helm install failed for release "+ns+"/hr-bad with chart redis@17.3.14: context deadline exceeded", int64(-1),
				retrying("Helm install failed")))}},
			want: "✗ HelmRelease reconciliation failed: InstallFailed: 'Helm install failed for release " + ns +
				"/hr-bad with chart redis@17.3.14: context deadline exceeded'",
		},
		{
			name: "helmrelease stalled",
			args: []string{"helmrelease", "hr-stalled"},
			stubs: []stub{{kinds.HelmRelease, "hr-stalled", onRequest(failure("RetriesExceeded",
				"Failed to install after 1 attempt(s)", nil, stalledCond("RetriesExceeded", "Failed to install after 1 attempt(s)")))}},
			want: "✗ HelmRelease reconciliation failed: RetriesExceeded: 'Failed to install after 1 attempt(s)'",
		},
		{
			name: "source git",
			args: []string{"source", "git", "git-bad"},
			stubs: []stub{{kinds.GitRepository, "git-bad", onRequest(failure("GitOperationFailed", gitFailed, nil,
				map[string]any{"type": "FetchFailed", "status": "True", "reason": "GitOperationFailed", "message": gitFailed,
					"lastTransitionTime": "2026-11-01T10:00:00Z"},
				retrying(gitFailed)))}},
			want: "✗ GitRepository reconciliation failed: GitOperationFailed: '" + gitFailed + "'",
		},
		{
			name: "source oci stalled",
			args: []string{"source", "oci", "oci-stalled"},
			stubs: []stub{{kinds.OCIRepository, "oci-stalled", onRequest(failure("URLInvalid", "URL must start with 'oci://'", nil,
				stalledCond("URLInvalid", "URL must start with 'oci://'")))}},
			want: "✗ OCIRepository reconciliation failed: URLInvalid: 'URL must start with 'oci://''",
		},
		{
			name: "source bucket",
			args: []string{"source", "bucket", "bucket-bad"},
			stubs: []stub{{kinds.Bucket, "bucket-bad", onRequest(failure("BucketOperationFailed",
				"bucket 'config' does not exist", nil, retrying("bucket 'config' does not exist")))}},
			want: "✗ Bucket reconciliation failed: BucketOperationFailed: 'bucket 'config' does not exist'",
		},
		{
			name: "source helm",
			args: []string{"source", "helm", "helm-bad"},
			stubs: []stub{{kinds.HelmRepository, "helm-bad", onRequest(failure("IndexationFailed",
				"failed to fetch Helm repository index: connection refused", nil, retrying("index")))}},
			want: "✗ HelmRepository reconciliation failed: IndexationFailed: 'failed to fetch Helm repository index: connection refused'",
		},
		{
			name: "source chart",
			args: []string{"source", "chart", "chart-bad"},
			stubs: []stub{{kinds.HelmChart, "chart-bad", onRequest(failure("ChartPullError",
				"no 'redis' chart with version matching '*' found", nil, retrying("pull")))}},
			want: "✗ HelmChart reconciliation failed: ChartPullError: 'no 'redis' chart with version matching '*' found'",
		},
		{
			name: "receiver",
			args: []string{"receiver", "receiver-bad"},
			stubs: []stub{{kinds.Receiver, "receiver-bad", onRequest(failure("TokenNotFound",
				"unable to read token from secret '"+ns+"/missing-token'", nil, retrying("token")))}},
			want: "✗ Receiver reconciliation failed: TokenNotFound: 'unable to read token from secret '" + ns + "/missing-token''",
		},
		{
			name: "image repository",
			args: []string{"image", "repository", "images-bad"},
			stubs: []stub{{kinds.ImageRepository, "images-bad", onRequest(failure("AuthenticationFailed",
				"GET http://127.0.0.1:1/v2/team/app/tags/list: UNAUTHORIZED", nil, retrying("auth")))}},
			want: "✗ ImageRepository reconciliation failed: AuthenticationFailed: 'GET http://127.0.0.1:1/v2/team/app/tags/list: UNAUTHORIZED'",
		},
		{
			name: "image policy",
			args: []string{"image", "policy", "policy-bad"},
			stubs: []stub{{kinds.ImagePolicy, "policy-bad", onRequest(failure("ReconciliationFailed",
				"cannot determine latest tag for policy: version list argument cannot be empty", nil, retrying("policy")))}},
			want: "✗ ImagePolicy reconciliation failed: ReconciliationFailed: 'cannot determine latest tag for policy: version list argument cannot be empty'",
		},
		{
			name: "image update",
			args: []string{"image", "update", "update-bad"},
			stubs: []stub{{kinds.ImageUpdateAutomation, "update-bad", onRequest(failure("GitOperationFailed",
				"failed to push to remote: connection refused", nil, retrying("push")))}},
			want: "✗ ImageUpdateAutomation reconciliation failed: GitOperationFailed: 'failed to push to remote: connection refused'",
		},
		{
			name: "kustomization --with-source whose source fails",
			args: []string{"ks", "ks-from-bad", "--with-source"},
			stubs: []stub{
				{kinds.GitRepository, "git-bad", onRequest(failure("GitOperationFailed", gitFailed, nil, retrying(gitFailed)))},
				{kinds.Kustomization, "ks-from-bad", onRequest(ready("ReconciliationSucceeded", "Applied revision: "+fetchedRev,
					map[string]any{"lastAppliedRevision": fetchedRev}))},
			},
			want:     "✗ GitRepository reconciliation failed: GitOperationFailed: '" + gitFailed + "'",
			notAsked: &stub{kind: kinds.Kustomization, name: "ks-from-bad"},
		},
		{
			// A chart source whose controller, like kustomize-controller,
			// leaves observedGeneration behind on a failure.
			name: "helmrelease --with-source whose HelmChart fails",
			args: []string{"hr", "hr-bad", "--with-source"},
			stubs: []stub{
				{kinds.HelmRepository, "charts", onRequest(ready("Succeeded", "stored artifact", artifact))},
				{kinds.HelmChart, ns + "-hr-bad", onRequest(failure("ChartPullError",
					"no 'redis' chart with version matching '>=99' found", int64(-1), retrying("pull")))},
				{kinds.HelmRelease, "hr-bad", onRequest(ready("InstallSucceeded", "Helm install succeeded", nil))},
			},
			want:     "✗ HelmChart reconciliation failed: ChartPullError: 'no 'redis' chart with version matching '>=99' found'",
			notAsked: &stub{kind: kinds.HelmRelease, name: "hr-bad"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.stubs {
				fakeController(t, s.kind, ns, s.name, s.react)
			}
			var before string
			if tt.notAsked != nil {
				before = requestToken(t, tt.notAsked.kind, ns, tt.notAsked.name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), failFastBound)
			defer cancel()
			start := time.Now()
			res := weirIO(ctx, t, "", nil, append(append([]string{"reconcile"}, tt.args...), "--timeout", "2m", "-n", ns)...)
			took := time.Since(start)
			t.Logf("exit %d after %s (--timeout 2m)", res.Code, took.Round(time.Millisecond))
			if res.Code != 1 {
				t.Errorf("exit code %d, want 1", res.Code)
			}
			if last := lastLine(res.Stderr); last != tt.want {
				t.Errorf("last line:\n%s\nwant:\n%s\nstderr:\n%s", last, tt.want, res.Stderr)
			}
			if tt.notAsked != nil {
				if after := requestToken(t, tt.notAsked.kind, ns, tt.notAsked.name); after != before {
					t.Errorf("%s %s was asked to reconcile after its source failed", tt.notAsked.kind.Kind, tt.notAsked.name)
				}
			}
		})
	}
}

// progressDelay is how long progressThenReady's controller takes.
const progressDelay = 1500 * time.Millisecond

// progressThenReady answers each new request as a controller that takes a
// while: at once with progress (lastHandledReconcileAt already the token,
// as helm-controller writes it when the run begins), then after
// progressDelay with done.
func progressThenReady(progress, done map[string]any) func(*unstructured.Unstructured) map[string]any {
	var seen string
	var since time.Time
	return func(u *unstructured.Unstructured) map[string]any {
		token := u.GetAnnotations()[meta.ReconcileRequestAnnotation]
		if token == "" {
			return nil
		}
		if token != seen {
			seen, since = token, time.Now()
		}
		if kinds.LastHandledReconcileAt(u) != token {
			s := deepCopyMap(progress)
			s["lastHandledReconcileAt"] = token
			return s
		}
		if c := kinds.Condition(u, meta.ReadyCondition); (c != nil && c.Status == "True") || time.Since(since) < progressDelay {
			return nil
		}
		s := deepCopyMap(done)
		s["lastHandledReconcileAt"] = token
		return s
	}
}

// TestReconcileWaitsForProgress: a request the controller has taken up
// but not finished (Reconciling=True, Ready Unknown, perhaps a Ready=False
// left by the run before) is waited for, and the command succeeds once the
// controller reports Ready, with the source first under --with-source.
func TestReconcileWaitsForProgress(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "reconcile/failing.yaml", ns)
	progressing := func(msg string, extra ...any) map[string]any {
		conds := append([]any{
			map[string]any{"type": "Reconciling", "status": "True", "reason": meta.ProgressingReason, "message": msg,
				"lastTransitionTime": "2026-11-01T10:00:00Z"},
		}, extra...)
		return map[string]any{"observedGeneration": int64(-1), "conditions": conds}
	}
	unknown := func(msg string) map[string]any {
		return map[string]any{"type": "Ready", "status": "Unknown", "reason": meta.ProgressingReason, "message": msg,
			"lastTransitionTime": "2026-11-01T10:00:00Z"}
	}
	applied := map[string]any{"lastAppliedRevision": fetchedRev,
		"conditions": readyCondition("ReconciliationSucceeded", "Applied revision: "+fetchedRev)}
	gitArtifact := map[string]any{"artifact": map[string]any{"path": "x.tgz", "url": "http://127.0.0.1/x.tgz", "revision": fetchedRev,
		"digest": "sha256:7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b", "lastUpdateTime": "2026-11-01T10:00:00Z"},
		"conditions": readyCondition("Succeeded", "stored artifact for revision '"+fetchedRev+"'")}

	for _, tt := range []struct {
		name  string
		args  []string
		stubs []stub
		want  []string
	}{
		{
			name: "kustomization applying",
			args: []string{"ks", "ks-slow"},
			stubs: []stub{{kinds.Kustomization, "ks-slow", progressThenReady(
				progressing("Reconciliation in progress", unknown("Reconciliation in progress")), applied)}},
			want: []string{"✔ applied revision " + fetchedRev},
		},
		{
			name: "helmrelease upgrading over the previous failure",
			args: []string{"hr", "hr-slow"},
			stubs: []stub{{kinds.HelmRelease, "hr-slow", progressThenReady(
				progressing("Running 'upgrade' action with timeout of 5m0s", map[string]any{"type": "Ready", "status": "False",
					"reason": "UpgradeFailed", "message": "Helm upgrade failed", "lastTransitionTime": "2026-11-01T10:00:00Z"}),
				map[string]any{"lastAttemptedRevision": "17.3.14",
					"conditions": readyCondition("UpgradeSucceeded", "Helm upgrade succeeded")})}},
			want: []string{"✔ applied revision 17.3.14"},
		},
		{
			name: "kustomization --with-source, both taking a while",
			args: []string{"ks", "ks-slow", "--with-source"},
			stubs: []stub{
				{kinds.GitRepository, "git-good", progressThenReady(
					progressing("building artifact", unknown("building artifact")), gitArtifact)},
				{kinds.Kustomization, "ks-slow", progressThenReady(
					progressing("Reconciliation in progress", unknown("Reconciliation in progress")), applied)},
			},
			want: []string{"✔ fetched revision " + fetchedRev, "✔ applied revision " + fetchedRev},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.stubs {
				fakeController(t, s.kind, ns, s.name, s.react)
			}
			start := time.Now()
			res := weir(t, append(append([]string{"reconcile"}, tt.args...), "--timeout", "2m", "-n", ns)...)
			took := time.Since(start)
			t.Logf("exit %d after %s", res.Code, took.Round(time.Millisecond))
			if res.Code != 0 {
				t.Errorf("exit code %d, want 0; stderr:\n%s", res.Code, res.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Stderr, w+"\n") {
					t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
				}
			}
			if atLeast := progressDelay * time.Duration(len(tt.stubs)); took < atLeast {
				t.Errorf("returned after %s, before the stand-in controllers could finish (%s)", took, atLeast)
			}
		})
	}
}

// requestToken is the object's reconcile.fluxcd.io/requestedAt.
func requestToken(t *testing.T, k kinds.Kind, ns, name string) string {
	t.Helper()
	u := k.New()
	if err := testenv.Get(t).Client.Get(t.Context(), keyOf(ns, name), u); err != nil {
		t.Fatal(err)
	}
	return u.GetAnnotations()[meta.ReconcileRequestAnnotation]
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestResumeWaitFailsFast: `resume` waits for the resumed object, and a
// Kustomization that fails at once and never succeeded (observedGeneration
// -1, as kustomize-controller leaves it; Ready=False of the generation the
// resume made) ends the wait at once with the failure, not after --timeout.
// The flux CLI waits here until status.observedGeneration catches up,
// which it does not on a failure the controller retries.
func TestResumeWaitFailsFast(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "reconcile/failing.yaml", ns)
	const pathNotFound = "kustomization path not found: stat nope: no such file or directory"
	u := kinds.Kustomization.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "ks-nope"), u); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, true, "spec", "suspend"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	suspendedAt := u.GetGeneration()
	// The controller answers each generation once it is not suspended.
	var answered int64
	fakeController(t, kinds.Kustomization, ns, "ks-nope", func(u *unstructured.Unstructured) map[string]any {
		if kinds.Suspended(u) || u.GetGeneration() == answered {
			return nil
		}
		answered = u.GetGeneration()
		return failure(meta.ArtifactFailedReason, pathNotFound, int64(-1), retrying(pathNotFound))
	})

	ctx, cancel := context.WithTimeout(context.Background(), failFastBound)
	defer cancel()
	start := time.Now()
	res := weirIO(ctx, t, "", nil, "resume", "ks", "ks-nope", "--timeout", "2m", "-n", ns)
	t.Logf("exit %d after %s (--timeout 2m)", res.Code, time.Since(start).Round(time.Millisecond))
	if res.Code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", res.Code, res.Stderr)
	}
	if want := "✗ Kustomization " + ns + "/ks-nope: " + pathNotFound; lastLine(res.Stderr) != want {
		t.Errorf("last line:\n%s\nwant:\n%s\nstderr:\n%s", lastLine(res.Stderr), want, res.Stderr)
	}
	if err := env.Client.Get(t.Context(), keyOf(ns, "ks-nope"), u); err != nil {
		t.Fatal(err)
	}
	if kinds.Suspended(u) || u.GetGeneration() == suspendedAt {
		t.Errorf("ks-nope not resumed: suspend %v, generation %d", kinds.Suspended(u), u.GetGeneration())
	}
}
