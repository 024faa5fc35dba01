module tenancy.local/realrun/flux/manifests

go 1.26.0

// Not built: the RBAC and ServiceAccounts of Flux's own install manifests (manifests/rbac,
// manifests/bases), which the flux2 chart mirrors; read by tools/realrun/controllers/flux.py.
require github.com/fluxcd/flux2/v2 v2.9.5
