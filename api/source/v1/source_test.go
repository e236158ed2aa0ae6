package v1

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/weir-gitops/weir/api/meta"
)

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{GitRepositoryKind, OCIRepositoryKind, BucketKind, HelmRepositoryKind, HelmChartKind, ExternalArtifactKind} {
		for _, k := range []string{kind, kind + "List"} {
			if !s.Recognizes(GroupVersion.WithKind(k)) {
				t.Errorf("scheme does not know %s", k)
			}
		}
	}
}

func TestSourceRequeueAfterAndArtifact(t *testing.T) {
	interval := metav1.Duration{Duration: 5 * time.Minute}
	artifact := &meta.Artifact{Revision: "main@sha1:0123"}
	tests := []struct {
		name string
		src  Source
		want time.Duration
	}{
		{"GitRepository", &GitRepository{Spec: GitRepositorySpec{Interval: interval}, Status: GitRepositoryStatus{Artifact: artifact}}, 5 * time.Minute},
		{"OCIRepository", &OCIRepository{Spec: OCIRepositorySpec{Interval: interval}, Status: OCIRepositoryStatus{Artifact: artifact}}, 5 * time.Minute},
		{"Bucket", &Bucket{Spec: BucketSpec{Interval: interval}, Status: BucketStatus{Artifact: artifact}}, 5 * time.Minute},
		{"HelmRepository", &HelmRepository{Spec: HelmRepositorySpec{Interval: interval}, Status: HelmRepositoryStatus{Artifact: artifact}}, 5 * time.Minute},
		{"HelmRepository without interval", &HelmRepository{Status: HelmRepositoryStatus{Artifact: artifact}}, time.Minute},
		{"HelmChart", &HelmChart{Spec: HelmChartSpec{Interval: interval}, Status: HelmChartStatus{Artifact: artifact}}, 5 * time.Minute},
		{"ExternalArtifact", &ExternalArtifact{Status: ExternalArtifactStatus{Artifact: artifact}}, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.src.GetRequeueAfter(); got != tt.want {
				t.Errorf("GetRequeueAfter() = %v, want %v", got, tt.want)
			}
			if got := tt.src.GetArtifact(); got != artifact {
				t.Errorf("GetArtifact() = %v, want %v", got, artifact)
			}
		})
	}
}

func TestTimeoutDefaults(t *testing.T) {
	custom := &metav1.Duration{Duration: 90 * time.Second}
	tests := []struct {
		name string
		got  func() time.Duration
		want time.Duration
	}{
		{"OCIRepository default", (&OCIRepository{}).GetTimeout, 60 * time.Second},
		{"OCIRepository set", (&OCIRepository{Spec: OCIRepositorySpec{Timeout: custom}}).GetTimeout, 90 * time.Second},
		{"Bucket default", (&Bucket{}).GetTimeout, 60 * time.Second},
		{"Bucket set", (&Bucket{Spec: BucketSpec{Timeout: custom}}).GetTimeout, 90 * time.Second},
		{"HelmRepository default", (&HelmRepository{}).GetTimeout, 60 * time.Second},
		{"HelmRepository set", (&HelmRepository{Spec: HelmRepositorySpec{Timeout: custom}}).GetTimeout, 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got(); got != tt.want {
				t.Errorf("GetTimeout() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSetConditions(t *testing.T) {
	conds := []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason}}
	for _, obj := range []meta.ObjectWithConditions{
		&GitRepository{}, &OCIRepository{}, &Bucket{}, &HelmRepository{}, &HelmChart{}, &ExternalArtifact{},
	} {
		obj.SetConditions(conds)
		if got := obj.GetConditions(); len(got) != 1 || got[0].Type != meta.ReadyCondition {
			t.Errorf("%T: GetConditions() = %v after SetConditions", obj, got)
		}
	}
}

func TestNewObject(t *testing.T) {
	for kind, want := range map[string]string{
		GitRepositoryKind: "*v1.GitRepository", OCIRepositoryKind: "*v1.OCIRepository", BucketKind: "*v1.Bucket",
		HelmRepositoryKind: "*v1.HelmRepository", HelmChartKind: "*v1.HelmChart", ExternalArtifactKind: "*v1.ExternalArtifact",
	} {
		if got := fmt.Sprintf("%T", NewObject(kind)); got != want {
			t.Errorf("NewObject(%q) is %s, want %s", kind, got, want)
		}
	}
	if o := NewObject("Kustomization"); o != nil {
		t.Errorf("NewObject(Kustomization) = %T, want nil", o)
	}
}
