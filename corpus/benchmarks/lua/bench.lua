-- The Lua benchmark (docs/run-cost.md): kernels that exercise the parts of
-- the interpreter a register allocator and an inliner change most (the VM's
-- dispatch loop, tables, strings, the collector, closures and coroutines).
-- `lua bench.lua SCALE`; every line printed depends on the work done.
local scale = tonumber(arg[1]) or 1

-- Allocation and collection: complete binary trees.
local function tree(depth)
  if depth == 0 then return {} end
  return { tree(depth - 1), tree(depth - 1) }
end
local function check(node)
  if not node[1] then return 1 end
  return 1 + check(node[1]) + check(node[2])
end
local nodes = 0
for _ = 1, scale do nodes = nodes + check(tree(12)) end
print("trees", nodes)

-- Backtracking: arrays, recursion and branches (N queens).
local function queens(n)
  local columns, rising, falling = {}, {}, {}
  local function place(row)
    if row > n then return 1 end
    local found = 0
    for c = 1, n do
      if not columns[c] and not rising[row + c] and not falling[row - c + n] then
        columns[c], rising[row + c], falling[row - c + n] = true, true, true
        found = found + place(row + 1)
        columns[c], rising[row + c], falling[row - c + n] = false, false, false
      end
    end
    return found
  end
  return place(1)
end
local solutions = 0
for _ = 1, scale do solutions = solutions + queens(7) end
print("queens", solutions)

-- Floating point: a small n-body system.
local bodies = {}
for i = 1, 5 do
  bodies[i] = { x = i * 1.1, y = i * -0.7, z = i * 0.3, vx = 0.01 * i, vy = -0.02 * i,
                vz = 0.005, mass = 1.0 / i }
end
local function advance(dt)
  for i = 1, #bodies do
    local a = bodies[i]
    for j = i + 1, #bodies do
      local b = bodies[j]
      local dx, dy, dz = a.x - b.x, a.y - b.y, a.z - b.z
      local d2 = dx * dx + dy * dy + dz * dz + 0.01
      local mag = dt / (d2 * math.sqrt(d2))
      a.vx, a.vy, a.vz = a.vx - dx * b.mass * mag, a.vy - dy * b.mass * mag, a.vz - dz * b.mass * mag
      b.vx, b.vy, b.vz = b.vx + dx * a.mass * mag, b.vy + dy * a.mass * mag, b.vz + dz * a.mass * mag
    end
  end
  for _, b in ipairs(bodies) do
    b.x, b.y, b.z = b.x + dt * b.vx, b.y + dt * b.vy, b.z + dt * b.vz
  end
end
for _ = 1, 2000 * scale do advance(0.01) end
print("nbody", string.format("%.9f %.9f", bodies[1].x, bodies[5].z))

-- Strings: formatting, patterns, concatenation.
local parts = {}
for i = 1, 3000 * scale do
  parts[#parts + 1] = string.format("%05d:%s", (i * 7919) % 100000, ("ab"):rep(i % 7))
end
local joined = table.concat(parts, ",")
local replaced, count = joined:gsub("(%d%d)(%d)", "%2%1")
local letters = 0
for word in replaced:gmatch("[ab]+") do letters = letters + #word end
print("strings", #joined, count, letters, replaced:sub(1, 24))

-- Sorting with a comparison closure.
local values, seed = {}, 42
for i = 1, 4000 * scale do
  seed = (seed * 1103515245 + 12345) % 2147483648
  values[i] = seed % 100000
end
table.sort(values, function(a, b) return a % 1000 < b % 1000 or (a % 1000 == b % 1000 and a < b) end)
print("sort", values[1], values[#values // 2], values[#values])

-- Closures and coroutines.
local function counter()
  local n = 0
  return function(k) n = n + k; return n end
end
local total = 0
for i = 1, 200 * scale do
  local c = counter()
  for k = 1, 50 do total = total + c(k + i) % 97 end
end
local producer = coroutine.wrap(function()
  for i = 1, 20000 * scale do coroutine.yield(i * i % 1009) end
  coroutine.yield(nil)
end)
local sum = 0
for v in producer do sum = sum + v end
print("closures", total, sum)
