package v2

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGetReleaseName(t *testing.T) {
	// Expected hashes were computed outside Go with
	// `printf %s <name> | sha256sum | cut -c1-12`.
	tests := []struct {
		name            string
		objectName      string
		targetNamespace string
		releaseName     string
		want            string
	}{
		{name: "object name", objectName: "podinfo", want: "podinfo"},
		{name: "target namespace prefix", objectName: "podinfo", targetNamespace: "apps", want: "apps-podinfo"},
		{name: "explicit release name", objectName: "podinfo", releaseName: "frontend", want: "frontend"},
		{name: "explicit release name ignores target namespace", objectName: "podinfo", targetNamespace: "apps", releaseName: "frontend", want: "frontend"},
		{name: "53 characters are kept", objectName: strings.Repeat("x", 53), want: strings.Repeat("x", 53)},
		{name: "54 characters are shortened", objectName: strings.Repeat("x", 54), want: strings.Repeat("x", 40) + "-45f316e10b2c"},
		{
			// The input and hash come from Flux's documentation. Its printed
			// result keeps 42 characters before the dash (55 in all, more than
			// Helm accepts); Flux's code keeps 40, and so do we.
			name:            "example from Flux's documentation",
			objectName:      "with-a-nice-object-name",
			targetNamespace: "a-very-lengthy-target-namespace",
			want:            "a-very-lengthy-target-namespace-with-a-n-97af5d7f41f3",
		},
		{
			name:            "hash covers the namespace prefix",
			objectName:      "kube-prometheus-stack-crds",
			targetNamespace: "team-platform-observability",
			want:            "team-platform-observability-kube-prometh-e2f5c12c6897",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr := &HelmRelease{
				ObjectMeta: metav1.ObjectMeta{Name: tt.objectName, Namespace: "flux-system"},
				Spec:       HelmReleaseSpec{TargetNamespace: tt.targetNamespace, ReleaseName: tt.releaseName},
			}
			got := hr.GetReleaseName()
			if got != tt.want {
				t.Errorf("GetReleaseName() = %q, want %q", got, tt.want)
			}
			if len(got) > maxReleaseNameLength {
				t.Errorf("GetReleaseName() = %q is %d characters, more than Helm allows", got, len(got))
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	hr := &HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"}}
	if got := hr.GetTimeout(); got != 5*time.Minute {
		t.Errorf("GetTimeout() = %v, want 5m", got)
	}
	if got := hr.GetMaxHistory(); got != 5 {
		t.Errorf("GetMaxHistory() = %d, want 5", got)
	}
	if got := hr.GetStorageNamespace(); got != "apps" {
		t.Errorf("GetStorageNamespace() = %q, want apps", got)
	}
	if got := hr.GetReleaseNamespace(); got != "apps" {
		t.Errorf("GetReleaseNamespace() = %q, want apps", got)
	}
	if !hr.UsePersistentClient() {
		t.Error("UsePersistentClient() = false, want true")
	}
	if got := hr.GetHelmChartName(); got != "apps-podinfo" {
		t.Errorf("GetHelmChartName() = %q, want apps-podinfo", got)
	}
	if got := hr.GetDriftDetection().GetMode(); got != DriftDetectionDisabled {
		t.Errorf("drift detection mode = %q, want disabled", got)
	}
	if got := hr.GetInstall().GetCRDsPolicy(); got != Create {
		t.Errorf("install CRDs policy = %q, want Create", got)
	}
	if got := hr.GetUpgrade().GetCRDsPolicy(); got != Skip {
		t.Errorf("upgrade CRDs policy = %q, want Skip", got)
	}
	if got := hr.GetUpgrade().GetRemediation().GetStrategy(); got != RollbackRemediationStrategy {
		t.Errorf("upgrade remediation strategy = %q, want rollback", got)
	}
	if got := hr.GetUninstall().GetDeletionPropagation(); got != "background" {
		t.Errorf("deletion propagation = %q, want background", got)
	}
	if got := hr.GetActiveRemediation(); got != nil {
		t.Errorf("GetActiveRemediation() = %v before any attempt, want nil", got)
	}

	zero := 0
	hr.Spec = HelmReleaseSpec{
		Timeout:          &metav1.Duration{Duration: time.Minute},
		MaxHistory:       &zero,
		StorageNamespace: "helm-storage",
		TargetNamespace:  "podinfo",
	}
	if got := hr.GetTimeout(); got != time.Minute {
		t.Errorf("GetTimeout() = %v, want 1m", got)
	}
	if got := hr.GetMaxHistory(); got != 0 {
		t.Errorf("GetMaxHistory() = %d, want 0 (unlimited)", got)
	}
	if got := hr.GetStorageNamespace(); got != "helm-storage" {
		t.Errorf("GetStorageNamespace() = %q, want helm-storage", got)
	}
	if got := hr.GetReleaseNamespace(); got != "podinfo" {
		t.Errorf("GetReleaseNamespace() = %q, want podinfo", got)
	}
	if got := hr.GetInstall().GetTimeout(hr.GetTimeout()); got != time.Minute {
		t.Errorf("install timeout = %v, want the spec timeout", got)
	}
}

func TestInstallCRDsPolicy(t *testing.T) {
	tests := []struct {
		install Install
		want    CRDsPolicy
	}{
		{Install{}, Create},
		{Install{SkipCRDs: true}, Skip},
		{Install{SkipCRDs: true, CRDs: CreateReplace}, CreateReplace},
		{Install{CRDs: Skip}, Skip},
	}
	for _, tt := range tests {
		if got := tt.install.GetCRDsPolicy(); got != tt.want {
			t.Errorf("%+v: GetCRDsPolicy() = %q, want %q", tt.install, got, tt.want)
		}
	}
}

func TestRemediation(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name              string
		remediation       Remediation
		failures          int64
		testDefault       bool
		wantIgnoreTests   bool
		wantRemediateLast bool
		wantExhausted     bool
	}{
		{name: "install defaults", remediation: InstallRemediation{}, wantExhausted: false},
		{name: "install one failure, no retries", remediation: InstallRemediation{}, failures: 1, wantExhausted: true},
		{name: "install retries left", remediation: InstallRemediation{Retries: 3}, failures: 3},
		{name: "install retries used up", remediation: InstallRemediation{Retries: 3}, failures: 4, wantExhausted: true},
		{name: "install unlimited retries", remediation: InstallRemediation{Retries: -1}, failures: 100},
		{name: "install inherits test default", remediation: InstallRemediation{}, testDefault: true, wantIgnoreTests: true},
		{name: "install overrides test default", remediation: InstallRemediation{IgnoreTestFailures: &no}, testDefault: true},
		{name: "install remediates last failure", remediation: InstallRemediation{RemediateLastFailure: &yes}, wantRemediateLast: true},
		{name: "upgrade with retries remediates last failure", remediation: UpgradeRemediation{Retries: 2}, wantRemediateLast: true},
		{name: "upgrade without retries does not", remediation: UpgradeRemediation{}},
		{name: "upgrade explicit false wins", remediation: UpgradeRemediation{Retries: 2, RemediateLastFailure: &no}},
		{name: "upgrade retries used up", remediation: UpgradeRemediation{Retries: 1}, failures: 2, wantRemediateLast: true, wantExhausted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr := &HelmRelease{}
			hr.Status.InstallFailures = tt.failures
			hr.Status.UpgradeFailures = tt.failures
			r := tt.remediation
			if got := r.MustIgnoreTestFailures(tt.testDefault); got != tt.wantIgnoreTests {
				t.Errorf("MustIgnoreTestFailures() = %v, want %v", got, tt.wantIgnoreTests)
			}
			if got := r.MustRemediateLastFailure(); got != tt.wantRemediateLast {
				t.Errorf("MustRemediateLastFailure() = %v, want %v", got, tt.wantRemediateLast)
			}
			if got := r.RetriesExhausted(hr); got != tt.wantExhausted {
				t.Errorf("RetriesExhausted() = %v, want %v", got, tt.wantExhausted)
			}
		})
	}
}

func TestGetActiveRemediation(t *testing.T) {
	hr := &HelmRelease{Spec: HelmReleaseSpec{
		Install: &Install{Remediation: &InstallRemediation{Retries: 1}},
		Upgrade: &Upgrade{Remediation: &UpgradeRemediation{Retries: 2}},
	}}
	hr.Status.LastAttemptedReleaseAction = ReleaseActionInstall
	if got := hr.GetActiveRemediation().GetRetries(); got != 1 {
		t.Errorf("install: retries = %d, want 1", got)
	}
	hr.Status.LastAttemptedReleaseAction = ReleaseActionUpgrade
	r := hr.GetActiveRemediation()
	if got := r.GetRetries(); got != 2 {
		t.Errorf("upgrade: retries = %d, want 2", got)
	}
	r.IncrementFailureCount(hr)
	if hr.Status.UpgradeFailures != 1 || hr.Status.InstallFailures != 0 {
		t.Errorf("IncrementFailureCount counted install=%d upgrade=%d, want 0 and 1",
			hr.Status.InstallFailures, hr.Status.UpgradeFailures)
	}
}

func TestStrategyRetryInterval(t *testing.T) {
	if got := (InstallStrategy{Name: "RetryOnFailure"}).GetRetryInterval(); got != 5*time.Minute {
		t.Errorf("install default retry interval = %v, want 5m", got)
	}
	s := UpgradeStrategy{Name: "RetryOnFailure", RetryInterval: &metav1.Duration{Duration: 30 * time.Second}}
	if got := s.GetRetryInterval(); got != 30*time.Second {
		t.Errorf("upgrade retry interval = %v, want 30s", got)
	}
}

func TestValuesJSON(t *testing.T) {
	var spec HelmReleaseSpec
	if err := json.Unmarshal([]byte(`{"interval":"1m","values":{"replicaCount":2,"image":{"tag":"6.5.0"}}}`), &spec); err != nil {
		t.Fatal(err)
	}
	m, err := (&HelmRelease{Spec: spec}).GetValues()
	if err != nil {
		t.Fatal(err)
	}
	if m["replicaCount"] != float64(2) {
		t.Errorf("replicaCount = %v, want 2", m["replicaCount"])
	}
	out, err := json.Marshal(spec.Values)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"replicaCount":2,"image":{"tag":"6.5.0"}}` {
		t.Errorf("values round trip = %s", out)
	}
	copied := spec.DeepCopy()
	copied.Values.Raw[0] = '['
	if spec.Values.Raw[0] != '{' {
		t.Error("DeepCopy shares the values buffer")
	}
	if m, err := (&HelmRelease{}).GetValues(); m != nil || err != nil {
		t.Errorf("GetValues() without values = %v, %v; want nil, nil", m, err)
	}
}
