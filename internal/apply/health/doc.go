// Package health owns how weir judges the health of what a Kustomization
// applied and the readiness of what it depends on, where kstatus alone
// cannot: the CEL expressions of spec.healthCheckExprs and the readyExpr of
// spec.dependsOn entries. It compiles them, caches the compiled programs and
// evaluates them; internal/apply/ssa's WaitFor polls the cluster and calls back
// into Checks.Status for every object it reads.
//
// # healthCheckExprs
//
// Each entry names an apiVersion and kind and holds up to three
// expressions. As in Flux (RFC-0009, fluxcd/pkg runtime/cel):
//
//   - an entry applies to the objects of its group and kind; the version
//     in apiVersion is ignored. When several entries name the same group
//     and kind, the first wins and the others are neither compiled nor
//     used. weir also accepts an entry without a kind, which applies to
//     every kind of its group that no entry names exactly;
//   - the expressions see the object's top-level fields as variables
//     (apiVersion, kind, metadata, spec, status, or whatever a custom
//     resource has at the top), not a `self`;
//   - they are parsed, not type-checked, since custom resources need not
//     have the usual five top-level fields, so a result that is not a bool
//     is an evaluation error, not a compile error;
//   - when status.observedGeneration exists and differs from
//     metadata.generation the object is InProgress and no expression is
//     evaluated;
//   - otherwise inProgress, failed and current are evaluated in that order
//     (the first two are optional) and the first that holds decides; when
//     none holds the object is InProgress;
//   - an evaluation error (a field that does not exist, a result that is
//     not a bool) is an error, which WaitFor reports as status Unknown
//     with the error as its message: the wait goes on, fail-fast does not
//     fire, and a timeout names the error. Guard fields that appear late
//     with has() or optional selection (status.?conditions.orValue([])).
//     A variable the object lacks altogether (no status yet) cannot be
//     guarded: the object stays Unknown until the field appears;
//   - an expression that does not parse, or an entry without current,
//     makes the whole list invalid: Flux stalls the Kustomization with
//     reason InvalidCELExpression and does not retry until the spec
//     changes. Compile reports every invalid expression at once, each as
//     a *CompileError naming its entry, apiVersion, kind and field.
//
// Objects no entry applies to get kstatus's verdict, as before.
//
// # readyExpr
//
// A dependsOn entry's readyExpr sees two variables, `dep` (the dependency,
// as the API server returns it) and `self` (the dependent Kustomization),
// both declared as google.protobuf.Struct, and is type-checked: an
// expression that does not compile, or whose type is not bool (a bare
// `dep.spec.suspend` is dyn; write `dep.spec.suspend == false`), is a
// *CompileError, which Flux treats as terminal. By default readyExpr
// replaces the built-in check (Ready condition true for the current
// generation, and the dependency's last applied revision equal to the
// source's when both use the same source); with Flux's
// AdditiveCELDependencyCheck feature gate both must hold, readyExpr first.
// DependencyReady encodes that rule.
//
// # Environment and cache
//
// Both kinds of expressions compile in the environment Flux uses: CEL's
// standard library with optional types, cross-type numeric comparisons,
// UTC as the default time zone, homogeneous aggregate literals, and the
// strings, sets and encoders extensions. Programs are optimised at
// compile time and check for cancellation every 100 comprehension
// iterations, so a health check's context bounds them: only comprehensions
// can make an evaluation long, and they stop when the health check times
// out. A runtime cost limit, as the API server sets on validation rules,
// was measured and left out: it more than doubles the time and the
// allocations of a typical evaluation and bounds nothing the context does
// not.
//
// Compiled programs are cached by their text, for all Kustomizations at
// once: many Kustomizations reconcile in parallel and most share their
// expressions, and compiling costs far more than evaluating. Programs and
// the cache are safe for concurrent use. The cache holds at most
// maxCachedPrograms entries and forgets an arbitrary one when full; it
// remembers compile errors too, so a broken spec is not recompiled on
// every reconcile.
package health
