#!/usr/bin/env python3
"""Deletes what a throw-away manager of deploy/tests/check.sh leaves on the broker: its queues
expire (AM_QUEUE_EXPIRY), but its control exchange is auto-deleted only once a node's queue
has been bound to it and gone, so a manager that never saw a node would leave it for good.

  broker_cleanup.py AMQP_URL PREFIX
"""

import sys

import pika


def main(url, prefix):
    connection = pika.BlockingConnection(pika.URLParameters(url))
    try:
        # Deleting an exchange that is not there is no error in AMQP 0-9-1 as RabbitMQ does it.
        connection.channel().exchange_delete(exchange=f"{prefix}.control")
    finally:
        connection.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
