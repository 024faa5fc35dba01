"""A tenant's data, cloud-neutral: what exists in which namespace, under which lifecycle guard."""
