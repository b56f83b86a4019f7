module pulumi-fleet/test/fleet-schema/go-fields

go 1.22
