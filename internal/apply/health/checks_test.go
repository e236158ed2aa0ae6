package health_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/health"
)

// object decodes a YAML manifest the way objects come from the API server
// (integers as int64).
func object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatalf("decoding %s: %v", manifest, err)
	}
	return u
}

func objectFile(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return object(t, string(data))
}

// certificate returns a cert-manager Certificate with the given status
// (YAML, indented under status:), or none when empty.
func certificate(t testing.TB, generation int, statusYAML string) *unstructured.Unstructured {
	t.Helper()
	m := "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: tls, namespace: apps, generation: " +
		strconv.Itoa(generation) + "}\nspec: {secretName: tls}\n"
	if statusYAML != "" {
		m += "status:\n" + statusYAML
	}
	return object(t, m)
}

// certExprs are the expressions of Flux's CEL cheat sheet style for a
// cert-manager Certificate.
var certExprs = meta.HealthCheckExpressions{
	APIVersion: "cert-manager.io/v1",
	Kind:       "Certificate",
	InProgress: "status.conditions.exists(e, e.type == 'Issuing' && e.status == 'True')",
	Failed:     "status.conditions.exists(e, e.type == 'Ready' && e.status == 'False')",
	Current:    "status.conditions.exists(e, e.type == 'Ready' && e.status == 'True')",
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name    string
		exprs   meta.HealthCheckExpressions
		gen     int
		status  string
		want    *status.Result
		wantErr string
	}{
		{
			name:   "current holds",
			exprs:  certExprs,
			gen:    1,
			status: "  conditions: [{type: Ready, status: 'True', message: Certificate is up to date}]\n",
			want:   &status.Result{Status: status.CurrentStatus, Message: "Certificate is up to date"},
		},
		{
			name:   "failed holds, with the Ready message",
			exprs:  certExprs,
			gen:    1,
			status: "  conditions: [{type: Ready, status: 'False', message: issuer not found}]\n",
			want:   &status.Result{Status: status.FailedStatus, Message: "issuer not found"},
		},
		{
			name:   "inProgress is evaluated before failed",
			exprs:  certExprs,
			gen:    1,
			status: "  conditions: [{type: Issuing, status: 'True'}, {type: Ready, status: 'False', message: renewing}]\n",
			want:   &status.Result{Status: status.InProgressStatus, Message: "renewing"},
		},
		{
			name:   "failed is evaluated before current",
			exprs:  meta.HealthCheckExpressions{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Failed: "true", Current: "true"},
			gen:    1,
			status: "  conditions: []\n",
			want:   &status.Result{Status: status.FailedStatus, Message: "healthCheckExprs failed expression holds"},
		},
		{
			name:   "none holds",
			exprs:  certExprs,
			gen:    1,
			status: "  conditions: [{type: Issuing, status: 'False'}]\n",
			want:   &status.Result{Status: status.InProgressStatus, Message: "no healthCheckExprs expression holds yet"},
		},
		{
			name:   "observed generation lags: no expression is evaluated",
			exprs:  meta.HealthCheckExpressions{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Current: "status.no.such.field"},
			gen:    2,
			status: "  observedGeneration: 1\n",
			want:   &status.Result{Status: status.InProgressStatus, Message: "generation 2 is not observed yet (status.observedGeneration 1)"},
		},
		{
			name:   "observed generation current: expressions decide",
			exprs:  certExprs,
			gen:    2,
			status: "  observedGeneration: 2\n  conditions: [{type: Ready, status: 'True'}]\n",
			want:   &status.Result{Status: status.CurrentStatus},
		},
		{
			name:    "missing field is an error",
			exprs:   certExprs,
			gen:     1,
			status:  "  observedGeneration: 1\n",
			wantErr: `healthCheckExprs cert-manager.io/v1 Certificate inProgress expression "status.conditions.exists(e, e.type == 'Issuing' && e.status == 'True')": no such key: conditions`,
		},
		{
			name:    "no status at all is an error",
			exprs:   certExprs,
			gen:     1,
			wantErr: "no such attribute",
		},
		{
			name: "optional selection guards a missing field",
			exprs: meta.HealthCheckExpressions{
				APIVersion: "cert-manager.io/v1", Kind: "Certificate",
				Current: "status.?conditions.orValue([]).exists(e, e.type == 'Ready' && e.status == 'True')",
			},
			gen:    1,
			status: "  observedGeneration: 1\n",
			want:   &status.Result{Status: status.InProgressStatus, Message: "no healthCheckExprs expression holds yet"},
		},
		{
			name:    "non-bool result is an error",
			exprs:   meta.HealthCheckExpressions{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Current: "status.phase"},
			gen:     1,
			status:  "  phase: Ready\n",
			wantErr: `healthCheckExprs cert-manager.io/v1 Certificate current expression "status.phase": the result is string, not bool`,
		},
		{
			name:   "int and double compare, strings extension",
			exprs:  meta.HealthCheckExpressions{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Current: "metadata.generation == 1.0 && metadata.name.upperAscii() == 'TLS'"},
			gen:    1,
			status: "  conditions: []\n",
			want:   &status.Result{Status: status.CurrentStatus},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks, err := health.Compile([]meta.HealthCheckExpressions{tt.exprs})
			if err != nil {
				t.Fatal(err)
			}
			got, err := checks.Status(context.Background(), certificate(t, tt.gen, tt.status))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name  string
		exprs []meta.HealthCheckExpressions
		// want lists the errors, as Index/Field pairs, in order.
		want    []health.CompileError
		message string
	}{
		{
			name:  "valid",
			exprs: []meta.HealthCheckExpressions{certExprs},
		},
		{
			name: "syntax error in current",
			exprs: []meta.HealthCheckExpressions{
				{APIVersion: "example.com/v1", Kind: "Widget", Current: "status.ready ==", Failed: "false"},
			},
			want:    []health.CompileError{{Index: 0, APIVersion: "example.com/v1", Kind: "Widget", Field: "current", Expr: "status.ready =="}},
			message: `healthCheckExprs[0] (example.com/v1 Widget): invalid current expression "status.ready ==": ERROR: <input>:1:16: Syntax error`,
		},
		{
			name: "current missing",
			exprs: []meta.HealthCheckExpressions{
				{APIVersion: "example.com/v1", Kind: "Widget", Failed: "false"},
			},
			want:    []health.CompileError{{Index: 0, APIVersion: "example.com/v1", Kind: "Widget", Field: "current"}},
			message: `healthCheckExprs[0] (example.com/v1 Widget): current: an expression is required`,
		},
		{
			name: "every invalid expression is reported",
			exprs: []meta.HealthCheckExpressions{
				certExprs,
				{APIVersion: "example.com/v1", Kind: "Widget", InProgress: "(", Current: "true"},
				{APIVersion: "example.com/v1", Kind: "Gadget", Failed: "a.b.", Current: "]"},
			},
			want: []health.CompileError{
				{Index: 1, APIVersion: "example.com/v1", Kind: "Widget", Field: "inProgress", Expr: "("},
				{Index: 2, APIVersion: "example.com/v1", Kind: "Gadget", Field: "failed", Expr: "a.b."},
				{Index: 2, APIVersion: "example.com/v1", Kind: "Gadget", Field: "current", Expr: "]"},
			},
		},
		{
			name: "invalid apiVersion",
			exprs: []meta.HealthCheckExpressions{
				{APIVersion: "a/b/c", Kind: "Widget", Current: "true"},
			},
			want: []health.CompileError{{Index: 0, APIVersion: "a/b/c", Kind: "Widget", Field: "apiVersion", Expr: "a/b/c"}},
		},
		{
			name: "a later entry for the same group and kind is ignored, as in Flux",
			exprs: []meta.HealthCheckExpressions{
				certExprs,
				{APIVersion: "cert-manager.io/v1beta1", Kind: "Certificate", Current: "("},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := health.Compile(tt.exprs)
			var got []health.CompileError
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				got = flatten(joined.Unwrap())
			} else if err != nil {
				t.Fatalf("error %v is not a joined list", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".Err"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("compile errors (-want +got):\n%s", diff)
			}
			if len(tt.want) > 0 && !health.IsCompileError(err) {
				t.Errorf("IsCompileError(%v) = false", err)
			}
			if tt.message != "" && !strings.HasPrefix(err.Error(), tt.message) {
				t.Errorf("error %q, want it to start with %q", err, tt.message)
			}
		})
	}
}

// flatten collects the CompileErrors of a tree of joined errors.
func flatten(errs []error) []health.CompileError {
	var out []health.CompileError
	for _, err := range errs {
		var ce *health.CompileError
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			out = append(out, flatten(joined.Unwrap())...)
		} else if errors.As(err, &ce) {
			out = append(out, *ce)
		}
	}
	return out
}

func TestChecksMatching(t *testing.T) {
	widget := func(apiVersion, kind string) *unstructured.Unstructured {
		// No status: kstatus calls it Current; every expression below
		// would fail to evaluate on it.
		return object(t, "apiVersion: "+apiVersion+"\nkind: "+kind+"\nmetadata: {name: w, namespace: apps}\n")
	}
	checks, err := health.Compile([]meta.HealthCheckExpressions{
		{APIVersion: "example.com/v1", Kind: "Widget", Current: "metadata.name == 'w'"},
		{APIVersion: "example.com/v1", Kind: "Widget", Current: "false"},
		{APIVersion: "example.com/v1", Current: "metadata.name == 'other'"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := checks.Len(); got != 2 {
		t.Errorf("Len() = %d, want 2", got)
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want status.Status
	}{
		{"kind and group match", widget("example.com/v1", "Widget"), status.CurrentStatus},
		{"the version is ignored", widget("example.com/v2beta1", "Widget"), status.CurrentStatus},
		{"the group-wide entry applies to other kinds", widget("example.com/v1", "Gadget"), status.InProgressStatus},
		{"another group falls back to kstatus", widget("other.io/v1", "Widget"), status.CurrentStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checks.Status(context.Background(), tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Errorf("status %s (%s), want %s", got.Status, got.Message, tt.want)
			}
		})
	}
	if ev := checks.For(schema.GroupKind{Group: "other.io", Kind: "Widget"}); ev != nil {
		t.Errorf("For(other.io Widget) = %v, want nil", ev)
	}

	var none *health.Checks
	got, err := none.Status(context.Background(), widget("example.com/v1", "Widget"))
	if err != nil || got.Status != status.CurrentStatus {
		t.Errorf("nil Checks: %v, %v; want kstatus's Current", got, err)
	}
}

func TestEvaluateCancelled(t *testing.T) {
	checks, err := health.Compile([]meta.HealthCheckExpressions{{
		APIVersion: "apps/v1", Kind: "Deployment",
		Current: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a+b+c > 0)))",
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := checks.Status(ctx, objectFile(t, "testdata/deployment.yaml")); err == nil || !strings.Contains(err.Error(), "cancel") {
		t.Errorf("error %v, want an interruption", err)
	}
}
