package objectstate

import "testing"

func TestSchedule(t *testing.T) {
	const ready = `{type: Ready, status: "True", reason: Succeeded, message: ok, lastTransitionTime: "2026-12-01T10:00:00Z"}`
	tests := []struct {
		name, yaml, lastRun string
		interval            int64
	}{
		{"the Ready transition", `{apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, metadata: {name: a},
			spec: {interval: 5m}, status: {conditions: [` + ready + `]}}`, "2026-12-01T10:00:00Z", 300},
		{"a newer artifact", `{apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, metadata: {name: a},
			spec: {interval: 1m}, status: {conditions: [` + ready + `], artifact: {lastUpdateTime: "2026-12-01T10:03:00Z"}}}`,
			"2026-12-01T10:03:00Z", 60},
		{"a handled request after the history", `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: a},
			spec: {interval: 10m}, status: {conditions: [` + ready + `], lastHandledReconcileAt: "2026-12-01T10:20:00.123456789Z",
			history: [{lastReconciled: "2026-12-01T10:10:00Z"}]}}`, "2026-12-01T10:20:00Z", 600},
		{"a HelmRelease's last deploy", `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: a},
			spec: {interval: 1h}, status: {history: [{lastDeployed: "2026-12-01T11:00:00Z"}]}}`, "2026-12-01T11:00:00Z", 3600},
		{"a request token that is no time", `{apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, metadata: {name: a},
			spec: {interval: 5m}, status: {conditions: [` + ready + `], lastHandledReconcileAt: "now"}}`, "2026-12-01T10:00:00Z", 300},
		{"never run", `{apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, metadata: {name: a}, spec: {interval: 5m}}`, "", 0},
		{"no interval", `{apiVersion: notification.toolkit.fluxcd.io/v1beta3, kind: Alert, metadata: {name: a},
			status: {conditions: [` + ready + `]}}`, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(object(t, tt.yaml))
			if s.LastRun != tt.lastRun || s.Interval != tt.interval {
				t.Errorf("last run %q every %ds, want %q every %ds", s.LastRun, s.Interval, tt.lastRun, tt.interval)
			}
		})
	}
}
