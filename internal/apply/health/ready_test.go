package health_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/apply/health"
)

// kustomization returns a Kustomization as a map, the way the reconciler
// hands it to a readyExpr.
func kustomization(t testing.TB, manifest string) map[string]any {
	t.Helper()
	return object(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"+manifest).Object
}

func TestReadyExpr(t *testing.T) {
	dep := kustomization(t, `
metadata: {name: infra, namespace: flux-system, generation: 4, labels: {tier: infra}}
spec: {suspend: false, sourceRef: {kind: GitRepository, name: repo}}
status:
  observedGeneration: 4
  lastAppliedRevision: main@sha1:abc
  conditions:
  - {type: Ready, status: 'False', reason: HealthCheckFailed}
  - {type: Healthy, status: 'True'}
`)
	self := kustomization(t, `
metadata: {name: apps, namespace: flux-system, generation: 1, labels: {tier: infra}}
spec: {sourceRef: {kind: GitRepository, name: repo}}
`)
	tests := []struct {
		name       string
		expr       string
		want       bool
		compileErr string
		evalErr    string
	}{
		{
			name: "condition other than Ready",
			expr: "dep.status.conditions.exists(c, c.type == 'Healthy' && c.status == 'True')",
			want: true,
		},
		{
			name: "Ready is false",
			expr: "dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
			want: false,
		},
		{
			name: "dep and self together",
			expr: "dep.metadata.labels.tier == self.metadata.labels.tier && dep.spec.sourceRef.name == self.spec.sourceRef.name",
			want: true,
		},
		{
			name: "generations compare as numbers",
			expr: "dep.metadata.generation == dep.status.observedGeneration && dep.status.observedGeneration > 3",
			want: true,
		},
		{
			name: "revision prefix",
			expr: "dep.status.lastAppliedRevision.startsWith('main@')",
			want: true,
		},
		{
			name:       "syntax error",
			expr:       "dep.status.conditions.exists(c,",
			compileErr: `invalid readyExpr "dep.status.conditions.exists(c,": ERROR: <input>:1:32: Syntax error`,
		},
		{
			name:       "undeclared variable",
			expr:       "other.status.ready == true",
			compileErr: "undeclared reference to 'other'",
		},
		{
			name:       "dyn result is not bool",
			expr:       "dep.spec.suspend",
			compileErr: `invalid readyExpr "dep.spec.suspend": the expression's type is dyn, not bool`,
		},
		{
			name:       "int result",
			expr:       "dep.metadata.generation + 1 == 5 ? 1 : 0",
			compileErr: "the expression's type is int, not bool",
		},
		{
			name:    "missing field",
			expr:    "dep.status.inventory.entries.size() > 0",
			evalErr: `evaluating readyExpr "dep.status.inventory.entries.size() > 0": no such key: inventory`,
		},
		{
			name: "missing field guarded",
			expr: "has(dep.status.inventory) && dep.status.inventory.entries.size() > 0",
			want: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expr, err := health.CompileReadyExpr(tt.expr)
			if tt.compileErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.compileErr) || !health.IsCompileError(err) {
					t.Fatalf("compile error %v, want a CompileError containing %q", err, tt.compileErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if expr.String() != tt.expr {
				t.Errorf("String() = %q", expr.String())
			}
			got, err := expr.Evaluate(context.Background(), dep, self)
			if tt.evalErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.evalErr) {
					t.Fatalf("eval error %v, want one containing %q", err, tt.evalErr)
				}
				if health.IsCompileError(err) {
					t.Errorf("an evaluation error is not a compile error: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Evaluate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDependencyReady(t *testing.T) {
	dep := kustomization(t, "metadata: {name: infra, namespace: flux-system}\nspec: {suspend: false}\n")
	self := kustomization(t, "metadata: {name: apps, namespace: flux-system}\n")
	notReady := errors.New("dependency 'flux-system/infra' is not ready")
	tests := []struct {
		name     string
		expr     string
		builtin  error
		additive bool
		// want is "" for ready, else a part of the error.
		want        string
		wantCompile bool
	}{
		{name: "no readyExpr: built-in ready", builtin: nil, want: ""},
		{name: "no readyExpr: built-in not ready", builtin: notReady, want: "is not ready"},
		{name: "readyExpr true replaces built-in", expr: "dep.spec.suspend == false", builtin: notReady, want: ""},
		{name: "readyExpr false", expr: "dep.spec.suspend == true", builtin: nil, want: `dependency 'flux-system/infra' is not ready: readyExpr "dep.spec.suspend == true" is false`},
		{name: "additive: both hold", expr: "dep.spec.suspend == false", builtin: nil, additive: true, want: ""},
		{name: "additive: built-in fails", expr: "dep.spec.suspend == false", builtin: notReady, additive: true, want: "is not ready"},
		{name: "additive: readyExpr fails first", expr: "self.metadata.name == 'other'", builtin: nil, additive: true, want: "readyExpr \"self.metadata.name == 'other'\" is false"},
		{name: "invalid readyExpr is terminal", expr: "dep.spec.suspend", builtin: nil, want: "dependency 'flux-system/infra': invalid readyExpr", wantCompile: true},
		{name: "evaluation error is not terminal", expr: "dep.status.ready == true", builtin: nil, want: "dependency 'flux-system/infra': evaluating readyExpr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			builtinCalled := false
			err := health.DependencyReady(context.Background(), health.Dependency{
				Name:      "flux-system/infra",
				ReadyExpr: tt.expr,
				Object:    dep,
				Self:      self,
				Builtin: func() error {
					builtinCalled = true
					return tt.builtin
				},
			}, tt.additive)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v, want ready", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if got := health.IsCompileError(err); got != tt.wantCompile {
				t.Errorf("IsCompileError = %v, want %v", got, tt.wantCompile)
			}
			wantBuiltin := tt.expr == "" || (tt.additive && !strings.Contains(tt.want, "readyExpr"))
			if builtinCalled != wantBuiltin {
				t.Errorf("built-in check called: %v, want %v", builtinCalled, wantBuiltin)
			}
		})
	}
}
