"""A Function: ``kubectl function deploy hello --from examples/serverless/hello.py``."""


def handler(event, context):
    name = (event or {}).get("name", "world")
    return {"greeting": f"hello, {name}", "instance": context.function_name}
