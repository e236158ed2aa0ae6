package reconcilecmd

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOutcome is the verdict on one poll of an object for a request token,
// as the controllers leave their status at each point of a run.
func TestOutcome(t *testing.T) {
	const token, older = "2026-12-03T10:00:00.5Z", "2026-12-03T09:00:00Z"
	cond := func(typ, status, reason string, gen int64) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": reason + " message",
			"lastTransitionTime": "2026-12-03T10:00:01Z", "observedGeneration": gen}
	}
	noGen := func(c map[string]any) map[string]any { delete(c, "observedGeneration"); return c }
	retry := func(gen int64) map[string]any { return cond("Reconciling", "True", "ProgressingWithRetry", gen) }

	for _, tt := range []struct {
		name     string
		kind     string
		gen      int64
		status   map[string]any
		wantDone bool
		// wantReason is the Failure's reason, "" for success or waiting.
		wantReason string
		wantErr    bool // an error that is not a Failure
	}{
		{name: "not handled yet: the last run failed, for an older request", kind: "Kustomization", gen: 1, status: map[string]any{
			"lastHandledReconcileAt": older, "observedGeneration": int64(1),
			"conditions": []any{cond("Ready", "False", "BuildFailed", 1)},
		}},
		{name: "no status at all", kind: "GitRepository", gen: 1},
		{name: "handled, Ready", kind: "GitRepository", gen: 2, wantDone: true, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(2),
			"conditions": []any{cond("Ready", "True", "Succeeded", 2)},
		}},
		{name: "a later request covers ours", kind: "HelmChart", gen: 1, wantDone: true, status: map[string]any{
			"lastHandledReconcileAt": "2026-12-03T10:00:09Z", "observedGeneration": int64(1),
			"conditions": []any{cond("Ready", "True", "ChartPullSucceeded", 1)},
		}},
		// Issue 33: kustomize-controller leaves observedGeneration at -1
		// (never succeeded) or at the last good generation on a failure it
		// retries; Ready speaks of the current one.
		{name: "failed at once, never succeeded (observedGeneration -1)", kind: "Kustomization", gen: 1, wantDone: true, wantReason: "ArtifactFailed",
			status: map[string]any{
				"lastHandledReconcileAt": token, "observedGeneration": int64(-1),
				"conditions": []any{retry(1), cond("Ready", "False", "ArtifactFailed", 1)},
			}},
		{name: "failed after a spec change (observedGeneration behind)", kind: "Kustomization", gen: 3, wantDone: true, wantReason: "BuildFailed",
			status: map[string]any{
				"lastHandledReconcileAt": token, "observedGeneration": int64(2),
				"conditions": []any{cond("Ready", "False", "BuildFailed", 3), retry(3)},
			}},
		{name: "helmrelease failure to be retried", kind: "HelmRelease", gen: 1, wantDone: true, wantReason: "UpgradeFailed", status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(-1),
			"conditions": []any{cond("Ready", "False", "UpgradeFailed", 1), retry(1)},
		}},
		{name: "source failure (observedGeneration moves)", kind: "OCIRepository", gen: 4, wantDone: true, wantReason: "OCIPullFailed", status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(4),
			"conditions": []any{cond("Ready", "False", "OCIPullFailed", 4), cond("FetchFailed", "True", "OCIPullFailed", 4), retry(4)},
		}},
		{name: "stalled", kind: "HelmRelease", gen: 2, wantDone: true, wantReason: "RetriesExceeded", status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(2),
			"conditions": []any{cond("Stalled", "True", "RetriesExceeded", 2), cond("Ready", "False", "RetriesExceeded", 2)},
		}},
		{name: "stalled, Ready not False: Stalled's reason", kind: "ImagePolicy", gen: 1, wantDone: true, wantReason: "InvalidPolicy", status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
			"conditions": []any{cond("Stalled", "True", "InvalidPolicy", 1), cond("Ready", "Unknown", "Progressing", 1)},
		}},
		// The decision for waits: the handled request's answer.
		{name: "dependency not ready is the request's answer", kind: "Kustomization", gen: 1, wantDone: true, wantReason: "DependencyNotReady",
			status: map[string]any{
				"lastHandledReconcileAt": token, "observedGeneration": int64(-1),
				"conditions": []any{cond("Ready", "False", "DependencyNotReady", 1)},
			}},
		{name: "in progress: Reconciling, Ready Unknown", kind: "HelmRelease", gen: 1, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
			"conditions": []any{cond("Reconciling", "True", "Progressing", 1), cond("Ready", "Unknown", "Progressing", 1)},
		}},
		// Progress leaves Ready as the last run ended.
		{name: "in progress: Reconciling over an earlier Ready=False", kind: "GitRepository", gen: 1, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
			"conditions": []any{cond("Reconciling", "True", "Progressing", 1), cond("Ready", "False", "GitOperationFailed", 1)},
		}},
		{name: "in progress: Ready Unknown alone", kind: "Receiver", gen: 1, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
			"conditions": []any{cond("Ready", "Unknown", "Progressing", 1)},
		}},
		{name: "Ready of an older generation", kind: "Bucket", gen: 2, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
			"conditions": []any{cond("Ready", "False", "BucketOperationFailed", 1)},
		}},
		{name: "stalled at an older generation", kind: "HelmRelease", gen: 2, status: map[string]any{
			"lastHandledReconcileAt": token,
			"conditions":             []any{cond("Stalled", "True", "RetriesExceeded", 1), cond("Ready", "Unknown", "Progressing", 2), cond("Reconciling", "True", "Progressing", 2)},
		}},
		{name: "conditions without observedGeneration: the status' counts", kind: "ImageRepository", gen: 2, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
			"conditions": []any{noGen(cond("Ready", "False", "ReconciliationFailed", 0))},
		}},
		{name: "conditions without observedGeneration, status current", kind: "ImageRepository", gen: 2, wantDone: true, wantReason: "ReconciliationFailed",
			status: map[string]any{
				"lastHandledReconcileAt": token, "observedGeneration": int64(2),
				"conditions": []any{noGen(cond("Ready", "False", "ReconciliationFailed", 0))},
			}},
		{name: "handled without a Ready condition", kind: "ImageUpdateAutomation", gen: 1, wantDone: true, wantErr: true, status: map[string]any{
			"lastHandledReconcileAt": token, "observedGeneration": int64(1),
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetKind(tt.kind)
			u.SetName("x")
			u.SetNamespace("ns")
			u.SetGeneration(tt.gen)
			if tt.status != nil {
				u.Object["status"] = tt.status
			}
			done, err := Outcome(u, token)
			if done != tt.wantDone {
				t.Errorf("done = %v, want %v (err %v)", done, tt.wantDone, err)
			}
			var f *Failure
			switch {
			case tt.wantReason != "":
				if !errors.As(err, &f) || f.Reason != tt.wantReason || f.Message != tt.wantReason+" message" || f.Kind != tt.kind {
					t.Errorf("err = %v, want a %s Failure with reason %s and its message", err, tt.kind, tt.wantReason)
				}
			case tt.wantErr:
				if err == nil || errors.As(err, &f) {
					t.Errorf("err = %v, want an error that is not a Failure", err)
				}
			case err != nil:
				t.Errorf("err = %v, want none", err)
			}
		})
	}
}

func TestFailureMessage(t *testing.T) {
	f := &Failure{Kind: "Kustomization", Reason: "ArtifactFailed", Message: "kustomization path not found: stat nope: no such file or directory"}
	const want = "Kustomization reconciliation failed: ArtifactFailed: 'kustomization path not found: stat nope: no such file or directory'"
	if got := f.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
