module tenancy.local/realrun/flux/gitserver

go 1.26.0
