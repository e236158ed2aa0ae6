package helmchart

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/chart"
)

func TestApplyStatus(t *testing.T) {
	stored := &meta.Artifact{Path: "helmchart/ns/app/app-1.0.0.tgz", URL: "http://s/helmchart/ns/app/app-1.0.0.tgz", Revision: "1.0.0"}
	pulled := &chart.Build{Name: "app", Version: "1.1.0"}
	tests := []struct {
		name      string
		out       *outcome
		err       error
		wantReady metav1.ConditionStatus
		reason    string
		message   string
		wantTrue  []string
		wantGone  []string
	}{
		{name: "pulled", out: &outcome{artifact: stored, build: &chart.Build{Name: "app", Version: "1.0.0"}, sourceRevision: "sha256:abc"},
			wantReady: metav1.ConditionTrue, reason: sourcev1.ChartPullSucceededReason, message: "pulled 'app' chart with version '1.0.0'",
			wantTrue: []string{sourcev1.ArtifactInStorageCondition}, wantGone: []string{sourcev1.FetchFailedCondition, meta.ReconcilingCondition}},
		{name: "packaged", out: &outcome{artifact: stored, build: &chart.Build{Name: "app", Version: "1.0.0", Packaged: true}},
			wantReady: metav1.ConditionTrue, reason: sourcev1.ChartPackageSucceededReason, message: "packaged 'app' chart with version '1.0.0'"},
		{name: "values error stalls under BuildFailed", out: &outcome{artifact: stored, build: pulled},
			err:       &errs.Stalling{Err: &chart.BuildError{Reason: chart.ErrValuesFilesMerge, Err: errors.New("no values file")}, Reason: "ValuesFilesError"},
			wantReady: metav1.ConditionFalse, reason: "ValuesFilesError", message: "values files merge error: no values file",
			wantTrue: []string{sourcev1.BuildFailedCondition, meta.StalledCondition, sourcev1.ArtifactOutdatedCondition},
			wantGone: []string{sourcev1.FetchFailedCondition}},
		{name: "pull error retries under FetchFailed", out: &outcome{artifact: stored},
			err:       &errs.Generic{Err: &chart.BuildError{Reason: chart.ErrChartPull, Err: errors.New("503")}, Reason: "ChartPullError"},
			wantReady: metav1.ConditionFalse, reason: "ChartPullError", message: "chart pull error: 503",
			wantTrue: []string{sourcev1.FetchFailedCondition, meta.ReconcilingCondition}, wantGone: []string{meta.StalledCondition, sourcev1.ArtifactOutdatedCondition}},
		{name: "storage error", out: &outcome{artifact: stored, build: pulled},
			err:       &errs.Generic{Err: errors.New("disk full"), Reason: sourcev1.ArchiveOperationFailedReason},
			wantReady: metav1.ConditionFalse, reason: sourcev1.ArchiveOperationFailedReason, message: "disk full",
			wantTrue: []string{sourcev1.StorageOperationFailedCondition}},
		{name: "waiting for the source", out: &outcome{},
			err:       &errs.Waiting{Err: fmt.Errorf("no artifact available for GitRepository source 'app'"), Reason: noSourceArtifactReason},
			wantReady: metav1.ConditionFalse, reason: noSourceArtifactReason, message: "no artifact available for GitRepository source 'app'",
			wantTrue: []string{sourcev1.FetchFailedCondition, meta.ReconcilingCondition}, wantGone: []string{meta.StalledCondition}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			obj.Status.Artifact = stored
			obj.Status.ObservedChartName = "app"
			(&Reconciler{}).kind().WriteStatus(obj, tt.out, tt.err)
			ready := conditions.Get(obj, meta.ReadyCondition)
			if ready.Status != tt.wantReady || ready.Reason != tt.reason || ready.Message != tt.message {
				t.Errorf("Ready = %s %s %q, want %s %s %q", ready.Status, ready.Reason, ready.Message, tt.wantReady, tt.reason, tt.message)
			}
			for _, c := range tt.wantTrue {
				if !conditions.IsTrue(obj, c) {
					t.Errorf("%s not True: %v", c, obj.Status.Conditions)
				}
			}
			for _, c := range tt.wantGone {
				if conditions.Get(obj, c) != nil {
					t.Errorf("%s present: %v", c, obj.Status.Conditions)
				}
			}
			if obj.Status.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d", obj.Status.ObservedGeneration)
			}
		})
	}
}

func TestNormalizeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Charts.Example.com/stable/", "https://charts.example.com/stable"},
		{"https://charts.example.com/stable", "https://charts.example.com/stable"},
		{"oci://ghcr.io/org/charts//", "oci://ghcr.io/org/charts"},
		{"https://user:pw@charts.example.com/?x=1#f", "https://charts.example.com"},
		{"file://../lib", "file://../lib"},
		{"not a url", ""},
	}
	for _, tt := range tests {
		if got := normalizeURL(tt.in); got != tt.want {
			t.Errorf("normalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
