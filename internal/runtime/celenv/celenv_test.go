package celenv

import (
	"testing"

	"github.com/google/cel-go/cel"
)

// TestFluxOptions evaluates one expression per option Flux's environment
// has: each fails to compile or gives another answer without it.
func TestFluxOptions(t *testing.T) {
	env, err := cel.NewEnv(append(FluxOptions(), cel.Variable("o", cel.DynType))...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, expr string
	}{
		{"strings", `"Kustomization/Apps".lowerAscii().split("/")[1] == "apps"`},
		{"sets", `sets.contains([1, 2, 3], [2])`},
		{"encoders", `base64.encode(b"hi") == "aGk="`},
		{"optional types", `o.?missing.orValue("none") == "none"`},
		{"cross-type numeric comparisons", `o.replicas > 1.5`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ast, iss := env.Compile(tt.expr)
			if iss.Err() != nil {
				t.Fatalf("compile: %v", iss.Err())
			}
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(map[string]any{"o": map[string]any{"replicas": 2}})
			if err != nil {
				t.Fatalf("eval: %v", err)
			}
			if out.Value() != true {
				t.Errorf("%s = %v, want true", tt.expr, out.Value())
			}
		})
	}
}
