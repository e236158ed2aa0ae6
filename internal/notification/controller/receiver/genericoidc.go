package receiver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/celenv"
)

// defaultOIDCAudience is the audience a generic-oidc provider requires
// when spec.oidcProviders[].audience is empty, as in Flux.
const defaultOIDCAudience = "notification-controller"

// Variables the expressions of an OIDC provider see.
const (
	claimsVar = "claims"
	varsVar   = "vars"
)

// validateGenericOIDC verifies the bearer token with the configured
// provider whose issuerURL is the token's "iss" (discovery, then keys),
// then evaluates that provider's variables and validations over the
// claims. The claims are handed on to resource filters.
func validateGenericOIDC(ctx context.Context, c check) (verdict, error) {
	if len(c.spec.OIDCProviders) == 0 {
		return verdict{}, fmt.Errorf("%w: generic-oidc receiver has no oidcProviders configured", errUnauthenticated)
	}
	raw, err := bearerToken(c.req.header)
	if err != nil {
		return verdict{}, err
	}
	iss, err := unverifiedIssuer(raw)
	if err != nil {
		return verdict{}, fmt.Errorf("%w: failed to parse bearer token: %w", errUnauthenticated, err)
	}
	var provider *notificationv1.OIDCProvider
	for i := range c.spec.OIDCProviders {
		if c.spec.OIDCProviders[i].IssuerURL == iss {
			provider = &c.spec.OIDCProviders[i]
			break
		}
	}
	if provider == nil {
		return verdict{}, fmt.Errorf("%w: no oidcProvider configured for issuer %q", errUnauthenticated, truncate(iss))
	}
	audience := provider.Audience
	if audience == "" {
		audience = defaultOIDCAudience
	}
	claims, err := c.tokens.verify(ctx, provider.IssuerURL, audience, raw)
	if err != nil {
		return verdict{}, err
	}
	proc, err := compileOIDCProvider(*provider)
	if err != nil {
		return verdict{}, fmt.Errorf("invalid oidcProvider configuration for issuer %q: %w", provider.IssuerURL, err)
	}
	if err := proc.evaluate(ctx, claims); err != nil {
		return verdict{}, err
	}
	return verdict{claims: claims}, nil
}

// claimsEnv is the CEL environment of variables and validations: Flux's
// options, with `claims` and `vars`.
var claimsEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(celenv.FluxOptions(),
		cel.Variable(claimsVar, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varsVar, cel.MapType(cel.StringType, cel.DynType)),
	)...)
})

// claimsProcessor is an OIDC provider's compiled expressions.
type claimsProcessor struct {
	variables   []namedProgram
	validations []validationProgram
}

type namedProgram struct {
	name string
	prg  cel.Program
}

type validationProgram struct {
	prg     cel.Program
	message string
}

// compileOIDCProvider compiles a provider's variables (any type) and
// validations (boolean).
func compileOIDCProvider(p notificationv1.OIDCProvider) (*claimsProcessor, error) {
	env, err := claimsEnv()
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	cp := &claimsProcessor{}
	for _, v := range p.Variables {
		prg, err := compileClaimsExpr(env, v.Expression, false)
		if err != nil {
			return nil, fmt.Errorf("invalid expression for variable %q: %w", v.Name, err)
		}
		cp.variables = append(cp.variables, namedProgram{name: v.Name, prg: prg})
	}
	for _, v := range p.Validations {
		prg, err := compileClaimsExpr(env, v.Expression, true)
		if err != nil {
			return nil, fmt.Errorf("invalid expression for validation %q: %w", v.Message, err)
		}
		cp.validations = append(cp.validations, validationProgram{prg: prg, message: v.Message})
	}
	return cp, nil
}

func compileClaimsExpr(env *cel.Env, expr string, boolean bool) (cel.Program, error) {
	ast, issues := env.Compile(expr)
	if issues.Err() != nil {
		return nil, fmt.Errorf("failed to parse CEL expression %q: %w", expr, issues.Err())
	}
	if out := ast.OutputType(); boolean && !out.IsExactType(types.BoolType) && !out.IsExactType(types.DynType) {
		return nil, fmt.Errorf("CEL expression %q must return a boolean, not %s", expr, out)
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("failed to build CEL program for %q: %w", expr, err)
	}
	return prg, nil
}

// evaluate computes the variables in order, each seeing the ones before
// it, then every validation; the messages of all that fail are joined.
func (cp *claimsProcessor) evaluate(ctx context.Context, claims map[string]any) error {
	vars := map[string]any{}
	data := map[string]any{claimsVar: claims, varsVar: vars}
	for _, v := range cp.variables {
		val, _, err := v.prg.ContextEval(ctx, data)
		if err != nil {
			return fmt.Errorf("%w: failed to evaluate variable %q: %w", errNotAuthorised, v.name, err)
		}
		vars[v.name] = val
	}
	var failures []string
	for _, v := range cp.validations {
		val, _, err := v.prg.ContextEval(ctx, data)
		if err != nil {
			return fmt.Errorf("%w: failed to evaluate validation %q: %w", errNotAuthorised, v.message, err)
		}
		if ok, isBool := boolOf(val); !isBool {
			return fmt.Errorf("%w: validation %q returned %s, not bool", errNotAuthorised, v.message, val.Type().TypeName())
		} else if !ok {
			failures = append(failures, v.message)
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("%w: token validation failed: %s", errNotAuthorised, strings.Join(failures, "; "))
	}
	return nil
}

func boolOf(v ref.Val) (value, ok bool) {
	b, ok := v.(types.Bool)
	return bool(b), ok
}

// issuerURLPattern is the CRD's pattern on issuerURL, checked again for API
// servers that skipped the schema.
var issuerURLPattern = regexp.MustCompile(`^https?://`)

// checkOIDCProviders holds spec.oidcProviders to the CRD's rules (required
// fields, issuerURL pattern, unique issuers, at least one validation), as
// Flux's controller does for clusters whose API server did not.
func checkOIDCProviders(providers []notificationv1.OIDCProvider) error {
	if len(providers) == 0 {
		return fmt.Errorf("generic-oidc receivers must define at least one oidcProvider")
	}
	seen := map[string]bool{}
	for i, p := range providers {
		switch {
		case p.IssuerURL == "":
			return fmt.Errorf("oidcProviders[%d]: issuerURL is required", i)
		case !issuerURLPattern.MatchString(p.IssuerURL):
			return fmt.Errorf("oidcProviders[%d]: issuerURL %q must start with http:// or https://", i, p.IssuerURL)
		case seen[p.IssuerURL]:
			return fmt.Errorf("oidcProviders[%d]: duplicate issuerURL %q", i, p.IssuerURL)
		case len(p.Validations) == 0:
			return fmt.Errorf("oidcProviders[%d] (issuerURL=%q): at least one validation is required; without validations any caller able to obtain a token from this issuer can trigger the Receiver", i, p.IssuerURL)
		}
		seen[p.IssuerURL] = true
		for j, v := range p.Variables {
			if v.Name == "" || v.Expression == "" {
				return fmt.Errorf("oidcProviders[%d] (issuerURL=%q): variables[%d]: name and expression are required", i, p.IssuerURL, j)
			}
		}
		for j, v := range p.Validations {
			if v.Expression == "" || v.Message == "" {
				return fmt.Errorf("oidcProviders[%d] (issuerURL=%q): validations[%d]: expression and message are required", i, p.IssuerURL, j)
			}
		}
	}
	return nil
}
