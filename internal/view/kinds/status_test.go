package kinds

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func ks(generation int64, status map[string]any) *unstructured.Unstructured {
	u := Kustomization.New()
	u.SetGeneration(generation)
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func cond(t, s string, gen int64) map[string]any {
	c := map[string]any{"type": t, "status": s, "reason": "R", "message": "m " + t + "=" + s, "lastTransitionTime": "2026-11-01T10:00:00Z"}
	if gen != 0 {
		c["observedGeneration"] = gen
	}
	return c
}

// TestIsReady covers the flux CLI's readiness rule case by case.
func TestIsReady(t *testing.T) {
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		static  bool
		ready   bool
		wantErr bool
	}{
		{"never reconciled", ks(1, nil), false, false, false},
		{"CRD default observedGeneration -1", ks(1, map[string]any{"observedGeneration": int64(-1)}), false, false, false},
		{"no Ready condition", ks(1, map[string]any{"observedGeneration": int64(1)}), false, false, false},
		{"ready at generation", ks(2, map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Ready", "True", 2)}}), false, true, false},
		{"ready condition of an older generation", ks(3, map[string]any{"observedGeneration": int64(3), "conditions": []any{cond("Ready", "True", 2)}}), false, false, false},
		{"condition without generation, status caught up", ks(2, map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Ready", "True", 0)}}), false, true, false},
		{"condition without generation, status behind", ks(2, map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "True", 0)}}), false, false, false},
		{"reconciling", ks(1, map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "Unknown", 1), cond("Reconciling", "True", 1)}}), false, false, false},
		{"stalled", ks(1, map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "False", 1), cond("Stalled", "True", 1)}}), false, false, true},
		{"failed at once, never succeeded (observedGeneration -1)", ks(1, map[string]any{"observedGeneration": int64(-1), "conditions": []any{cond("Ready", "False", 1)}}), false, false, true},
		{"failed before this generation, never succeeded", ks(2, map[string]any{"observedGeneration": int64(-1), "conditions": []any{cond("Ready", "False", 1)}}), false, false, false},
		{"condition without generation, never observed", ks(1, map[string]any{"observedGeneration": int64(-1), "conditions": []any{cond("Ready", "False", 0)}}), false, false, false},
		{"failed at generation", ks(1, map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "False", 1)}}), false, false, true},
		{"static object without status", ks(1, nil), true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready, err := IsReady(tt.obj, tt.static)
			if ready != tt.ready || (err != nil) != tt.wantErr {
				t.Errorf("IsReady = %v, %v; want %v, error %v", ready, err, tt.ready, tt.wantErr)
			}
		})
	}
}

func TestReadyStatusAndSelector(t *testing.T) {
	u := ks(1, nil)
	if s, m := ReadyStatus(u); s != "False" || m != NotReconciledMessage {
		t.Errorf("no conditions: %s %q", s, m)
	}
	u = ks(1, map[string]any{"conditions": []any{cond("Ready", "False", 1), cond("Stalled", "True", 1)}})
	if s, m := ReadyStatus(u); s != "False" || m != "m Ready=False" {
		t.Errorf("ReadyStatus = %s %q", s, m)
	}
	for sel, want := range map[[2]string]bool{
		{"ready", "false"}: true, {"READY", "False"}: true, {"ready", "true"}: false,
		{"stalled", "true"}: true, {"reconciling", "true"}: false,
	} {
		if got := StatusMatches(u, sel[0], sel[1]); got != want {
			t.Errorf("StatusMatches(%s=%s) = %v, want %v", sel[0], sel[1], got, want)
		}
	}
}

func TestRevisions(t *testing.T) {
	hr := HelmRelease.New()
	hr.Object["status"] = map[string]any{"lastAttemptedRevision": "6.0.4", "history": []any{map[string]any{"chartVersion": "6.0.3"}}}
	if got := HelmRelease.Revision(hr); got != "6.0.3" {
		t.Errorf("HelmRelease revision %q, want the newest release's chart version", got)
	}
	delete(hr.Object["status"].(map[string]any), "history")
	if got := HelmRelease.Revision(hr); got != "6.0.4" {
		t.Errorf("HelmRelease revision without history %q, want lastAttemptedRevision", got)
	}
	git := GitRepository.New()
	git.Object["status"] = map[string]any{"artifact": map[string]any{"revision": "main@sha1:abc"}}
	if got := GitRepository.SuccessMessage(git); got != "fetched revision main@sha1:abc" {
		t.Errorf("SuccessMessage = %q", got)
	}
	helm := HelmRepository.New()
	helm.Object["spec"] = map[string]any{"type": "oci"}
	if !HelmRepository.Static(helm) || GitRepository.Static(git) {
		t.Error("only an OCI HelmRepository is static")
	}
}

// TestReceiverKind: a Receiver has neither revision nor source, and is
// reported with the flux CLI's fixed words.
func TestReceiverKind(t *testing.T) {
	u := Receiver.New()
	u.Object["status"] = map[string]any{"webhookPath": "/hook/abc"}
	if Receiver.HasRevision() || Receiver.HasOrigin() || Receiver.Revision(u) != "" || Receiver.Origin(u) != "" {
		t.Error("a Receiver has no revision and no origin")
	}
	if got := Receiver.SuccessMessage(u); got != "Receiver reconciliation completed" {
		t.Errorf("SuccessMessage = %q", got)
	}
	if !Kustomization.HasRevision() || !Kustomization.HasOrigin() {
		t.Error("a Kustomization has a revision and an origin")
	}
	if k, ok := ByKind("receiver"); !ok || k.Kind != "Receiver" || k.GetUse != "receivers" {
		t.Errorf("ByKind(receiver) = %+v, %v", k, ok)
	}
}

func TestComputeRetryingFailure(t *testing.T) {
	u := ks(1, map[string]any{"observedGeneration": int64(1), "conditions": []any{
		cond("Ready", "False", 1),
		map[string]any{"type": "Reconciling", "status": "True", "reason": "ProgressingWithRetry", "message": "retrying", "lastTransitionTime": "2026-11-01T10:00:00Z", "observedGeneration": int64(1)},
	}})
	if res, err := Compute(u); err != nil || res.Status != kstatus.FailedStatus {
		t.Errorf("a failure being retried: Compute = %+v, %v; want Failed", res, err)
	}
	u = ks(1, map[string]any{"observedGeneration": int64(1), "conditions": []any{
		cond("Ready", "Unknown", 1), cond("Reconciling", "True", 1),
	}})
	if res, err := Compute(u); err != nil || res.Status != kstatus.InProgressStatus {
		t.Errorf("a reconciliation in progress: Compute = %+v, %v; want InProgress", res, err)
	}
}
