package health_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/health"
)

// deploymentExprs judge a Deployment the way a user would for a custom
// resource: rolled out and available.
var deploymentExprs = meta.HealthCheckExpressions{
	APIVersion: "apps/v1",
	Kind:       "Deployment",
	InProgress: "status.?updatedReplicas.orValue(0) < spec.replicas",
	Failed:     "status.conditions.exists(c, c.type == 'Progressing' && c.status == 'False')",
	Current:    "status.conditions.exists(c, c.type == 'Available' && c.status == 'True') && status.availableReplicas == spec.replicas",
}

// BenchmarkEvaluate evaluates compiled expressions over a Deployment as
// the API server returns it (managedFields included): "current" alone,
// then a full entry (inProgress, failed, current) through Checks.Status,
// then kstatus for comparison.
func BenchmarkEvaluate(b *testing.B) {
	obj := objectFile(b, "testdata/deployment.yaml")
	ctx := context.Background()
	b.Run("current", func(b *testing.B) {
		checks, err := health.Compile([]meta.HealthCheckExpressions{{
			APIVersion: "apps/v1", Kind: "Deployment", Current: deploymentExprs.Current,
		}})
		if err != nil {
			b.Fatal(err)
		}
		benchStatus(ctx, b, checks, obj)
	})
	b.Run("entry", func(b *testing.B) {
		checks, err := health.Compile([]meta.HealthCheckExpressions{deploymentExprs})
		if err != nil {
			b.Fatal(err)
		}
		benchStatus(ctx, b, checks, obj)
	})
	b.Run("kstatus", func(b *testing.B) {
		benchStatus(ctx, b, nil, obj)
	})
}

func benchStatus(ctx context.Context, b *testing.B, checks *health.Checks, obj *unstructured.Unstructured) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		res, err := checks.Status(ctx, obj)
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != status.CurrentStatus {
			b.Fatalf("status %s: %s", res.Status, res.Message)
		}
	}
}
