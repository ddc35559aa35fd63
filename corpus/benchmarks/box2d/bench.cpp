// Box2D benchmark driver (corpus/recipes/box2d.sh): a world with gravity, a
// ground with walls, a pyramid of boxes, a pendulum chain held by revolute
// joints and a rain of circles and triangles, stepped at 1/60 s with 8
// velocity and 3 position iterations: broad phase, contact generation and
// the constraint solvers, where a physics engine spends its time. The sizes
// come from the file given on the command line ("ROWS BALLS STEPS"). Prints,
// every quarter of the run, the body and contact counts, the bodies awake
// and an FNV-1a hash of every position and angle rounded to 1e-4 (IEEE
// arithmetic without -ffast-math: the same in every build). Exits 1 on error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>

#include "box2d/box2d.h"

namespace {

uint64_t hash_value(uint64_t hash, double value) {
  auto fixed = static_cast<uint64_t>(std::llround(value * 1e4));
  for (int i = 0; i < 8; i++) hash = (hash ^ ((fixed >> (8 * i)) & 0xFF)) * 1099511628211ULL;
  return hash;
}

b2Body *add_body(b2World &world, b2BodyType type, b2Vec2 position, const b2Shape &shape,
                 float density, float friction) {
  b2BodyDef body_def;
  body_def.type = type;
  body_def.position = position;
  b2Body *body = world.CreateBody(&body_def);
  b2FixtureDef fixture;
  fixture.shape = &shape;
  fixture.density = density;
  fixture.friction = friction;
  body->CreateFixture(&fixture);
  return body;
}

void report(b2World &world, int step) {
  uint64_t hash = 14695981039346656037ULL;
  int bodies = 0, awake = 0;
  for (b2Body *body = world.GetBodyList(); body; body = body->GetNext()) {
    bodies++;
    awake += body->IsAwake() ? 1 : 0;
    hash = hash_value(hash, body->GetPosition().x);
    hash = hash_value(hash, body->GetPosition().y);
    hash = hash_value(hash, body->GetAngle());
  }
  std::printf("step %d: %d bodies, %d awake, %d contacts, positions fnv1a %016llx\n", step,
              bodies, awake, world.GetContactCount(), static_cast<unsigned long long>(hash));
}

}  // namespace

int main(int argc, char **argv) {
  int rows = 0, balls = 0, steps = 0;
  std::ifstream params(argc == 2 ? argv[1] : "");
  if (!(params >> rows >> balls >> steps) || rows < 1 || balls < 0 || steps < 4) {
    std::fprintf(stderr, "usage: bench-box2d PARAMS (a file holding ROWS BALLS STEPS)\n");
    return 2;
  }
  auto world = std::make_unique<b2World>(b2Vec2(0.0f, -10.0f));

  // Ground and two walls.
  b2EdgeShape edge;
  edge.SetTwoSided(b2Vec2(-40.0f, 0.0f), b2Vec2(40.0f, 0.0f));
  b2Body *ground = add_body(*world, b2_staticBody, b2Vec2(0.0f, 0.0f), edge, 0.0f, 0.6f);
  b2PolygonShape wall;
  wall.SetAsBox(0.5f, 20.0f, b2Vec2(-40.0f, 20.0f), 0.0f);
  ground->CreateFixture(&wall, 0.0f);
  wall.SetAsBox(0.5f, 20.0f, b2Vec2(40.0f, 20.0f), 0.0f);
  ground->CreateFixture(&wall, 0.0f);

  // The pyramid, as in Box2D's testbed.
  b2PolygonShape box;
  box.SetAsBox(0.5f, 0.5f);
  for (int i = 0; i < rows; i++) {
    b2Vec2 position(-0.5625f * (rows - 1 - i) - 10.0f, 0.5f + 1.0f * i);
    for (int j = i; j < rows; j++) {
      add_body(*world, b2_dynamicBody, position, box, 5.0f, 0.6f);
      position.x += 1.125f;
    }
  }

  // A pendulum chain of 12 links on revolute joints, swinging into the rain.
  b2PolygonShape link;
  link.SetAsBox(0.6f, 0.125f);
  b2Body *previous = ground;
  for (int i = 0; i < 12; i++) {
    b2Body *body = add_body(*world, b2_dynamicBody, b2Vec2(12.5f + i, 24.0f), link, 20.0f, 0.2f);
    b2RevoluteJointDef joint;
    joint.Initialize(previous, body, b2Vec2(12.0f + i, 24.0f));
    if (!world->CreateJoint(&joint)) return 1;
    previous = body;
  }

  // Circles and triangles dropped from a grid above the scene.
  b2CircleShape circle;
  circle.m_radius = 0.4f;
  b2PolygonShape triangle;
  b2Vec2 corners[3] = {b2Vec2(-0.5f, 0.0f), b2Vec2(0.5f, 0.0f), b2Vec2(0.0f, 0.8f)};
  triangle.Set(corners, 3);
  for (int i = 0; i < balls; i++) {
    b2Vec2 position(-30.0f + 2.1f * (i % 28), 30.0f + 1.7f * (i / 28));
    const b2Shape &shape = (i % 3 == 2) ? static_cast<const b2Shape &>(triangle) : circle;
    add_body(*world, b2_dynamicBody, position, shape, 1.0f + 0.25f * (i % 4), 0.3f);
  }

  for (int step = 1; step <= steps; step++) {
    world->Step(1.0f / 60.0f, 8, 3);
    if (step % (steps / 4) == 0 || step == steps) report(*world, step);
  }
  return 0;
}
